//! Images going to the model: a picture the user attaches (`-i FILE`, a front end's image) or
//! `read_file` opens is kept once in `LING_HOME/images/` (owner-only, named by its content's
//! hash) and carried in the conversation as an [`ImageRef`], a few dozen bytes, so the transcript
//! holds a reference rather than megabytes per turn and `--resume` sends it again. Each wire API
//! asks for its own bounds ([`Limits`]): the image goes at the size that API would read anyway,
//! made once and kept beside the stored one ([`encoded`]). Decoding, downscaling and
//! re-encoding are the `image` crate's (`resize.rs`).

mod resize;

use std::path::{Path, PathBuf};

use base64::Engine;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use resize::Effort;
pub use resize::{Limits, fit};

/// The largest image file taken in (a screenshot is far smaller; a bigger file is most likely
/// not meant for the model).
pub const MAX_INPUT_BYTES: u64 = 50 << 20;
/// The longest edge an image is kept at: no API reads more (OpenAI fits images in 2048 x 2048,
/// Anthropic in 1568).
pub const STORED_LONG_EDGE: u32 = 2048;

/// An image in the conversation: where its bytes are kept, and what they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageRef {
    /// The stored file (in `LING_HOME/images/`).
    pub path: PathBuf,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    pub width: u32,
    pub height: u32,
    /// What the user or the tool called it (a file name), for what is shown and said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl ImageRef {
    /// `shot.png (1024x768)`, for text that stands for the image.
    pub fn label(&self) -> String {
        let name = self
            .name
            .clone()
            .or_else(|| {
                self.path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| "image".into());
        format!("{name} ({}x{})", self.width, self.height)
    }
}

/// An image as a request carries it: its media type and its bytes in base64.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded {
    pub media_type: String,
    pub base64: String,
    pub width: u32,
    pub height: u32,
}

impl Encoded {
    /// `data:image/png;base64,...`, as OpenAI's APIs take an image.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.base64)
    }
}

/// Why an image cannot go to the model. Each message says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    #[error("cannot read the image {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot keep the image in {}: {source}; check that LING_HOME is writable", dir.display())]
    Store {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{name} is not an image the model APIs take (PNG, JPEG, GIF or WebP); convert it first, \
         e.g. `convert {name} out.png`"
    )]
    NotAnImage { name: String },
    #[error("{name} could not be decoded as {format}: {detail}")]
    Decode {
        name: String,
        format: &'static str,
        detail: String,
    },
    #[error("{name} is {size} bytes, more than the {MAX_INPUT_BYTES} an image may have")]
    TooLarge { name: String, size: u64 },
    #[error("the image {} could not be re-encoded: {detail}", path.display())]
    Encode { path: PathBuf, detail: String },
}

/// The image formats the model APIs take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl Format {
    pub fn media_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Jpeg => "jpg",
            Self::Gif => "gif",
            Self::Webp => "webp",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Png => "PNG",
            Self::Jpeg => "JPEG",
            Self::Gif => "GIF",
            Self::Webp => "WebP",
        }
    }

    fn of_media_type(media_type: &str) -> Option<Self> {
        match media_type {
            "image/png" => Some(Self::Png),
            "image/jpeg" => Some(Self::Jpeg),
            "image/gif" => Some(Self::Gif),
            "image/webp" => Some(Self::Webp),
            _ => None,
        }
    }

    fn image_format(self) -> image::ImageFormat {
        match self {
            Self::Png => image::ImageFormat::Png,
            Self::Jpeg => image::ImageFormat::Jpeg,
            Self::Gif => image::ImageFormat::Gif,
            Self::Webp => image::ImageFormat::WebP,
        }
    }
}

/// The format of these bytes, by their magic number; `None`: not one the APIs take.
pub fn sniff(bytes: &[u8]) -> Option<Format> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(Format::Png)
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(Format::Jpeg)
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some(Format::Gif)
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some(Format::Webp)
    } else {
        None
    }
}

/// Whether a file name looks like an image the APIs take (before reading it).
pub fn has_image_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .is_some_and(|e| matches!(e.as_str(), "png" | "jpg" | "jpeg" | "gif" | "webp"))
}

/// Where images are kept: `LING_HOME/images/`. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageStore {
    dir: PathBuf,
}

impl ImageStore {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// The store of this `LING_HOME`.
    pub fn in_home(home: &Path) -> Self {
        Self::new(home.join("images"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Keeps the image file at `path` (a front end's `-i FILE`, a pasted path).
    pub fn add_file(&self, path: &Path) -> Result<ImageRef, MediaError> {
        let read = |source| MediaError::Read {
            path: path.to_path_buf(),
            source,
        };
        let size = std::fs::metadata(path).map_err(read)?.len();
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into(),
        );
        if size > MAX_INPUT_BYTES {
            return Err(MediaError::TooLarge { name, size });
        }
        let bytes = std::fs::read(path).map_err(read)?;
        self.add(&bytes, &name)
    }

    /// Keeps these image bytes, named `name`: as they are when they are small enough for every
    /// API, else downscaled to [`STORED_LONG_EDGE`] and re-encoded. The same bytes are kept once.
    pub fn add(&self, bytes: &[u8], name: &str) -> Result<ImageRef, MediaError> {
        if bytes.len() as u64 > MAX_INPUT_BYTES {
            return Err(MediaError::TooLarge {
                name: name.to_string(),
                size: bytes.len() as u64,
            });
        }
        let format = sniff(bytes).ok_or_else(|| MediaError::NotAnImage {
            name: name.to_string(),
        })?;
        let decode_error = |detail: String| MediaError::Decode {
            name: name.to_string(),
            format: format.name(),
            detail,
        };
        let (width, height) =
            image::ImageReader::with_format(std::io::Cursor::new(bytes), format.image_format())
                .into_dimensions()
                .map_err(|e| decode_error(e.to_string()))?;
        let keep = Limits::stored();
        let (kept, format, width, height) =
            if fit(width, height, &keep) == (width, height) && bytes.len() <= keep.max_bytes {
                (bytes.to_vec(), format, width, height)
            } else {
                let decoded = image::load_from_memory_with_format(bytes, format.image_format())
                    .map_err(|e| decode_error(e.to_string()))?;
                let made = resize::shrink(&decoded, format, &keep, keep.max_bytes, Effort::Keep)
                    .map_err(|detail| decode_error(detail.to_string()))?;
                (made.bytes, made.format, made.width, made.height)
            };
        let hash = hex(&Sha256::digest(&kept));
        let path = self
            .dir
            .join(format!("{}.{}", &hash[..32], format.extension()));
        if !path.is_file() {
            crate::config::private_fs::write_atomic(&path, &kept).map_err(|source| {
                MediaError::Store {
                    dir: self.dir.clone(),
                    source,
                }
            })?;
        }
        Ok(ImageRef {
            path,
            media_type: format.media_type().to_string(),
            width,
            height,
            name: Some(name.to_string()),
        })
    }
}

/// The image as a request to an API with these limits carries it: the stored file when it is
/// within them, else a smaller copy, made once and kept beside it (`NAME-WxH.EXT`).
pub fn encoded(image: &ImageRef, limits: &Limits) -> Result<Encoded, MediaError> {
    let (width, height) = fit(image.width, image.height, limits);
    let read = |path: &Path| {
        std::fs::read(path).map_err(|source| MediaError::Read {
            path: path.to_path_buf(),
            source,
        })
    };
    let stored_format = Format::of_media_type(&image.media_type).unwrap_or(Format::Png);
    if (width, height) == (image.width, image.height) {
        let bytes = read(&image.path)?;
        if bytes.len() <= limits.max_bytes {
            return Ok(Encoded {
                media_type: stored_format.media_type().to_string(),
                base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
                width,
                height,
            });
        }
    }
    let stem = image
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = image.path.parent().unwrap_or(Path::new("."));
    // Named by the size asked for: a copy shrunk further to fit the bytes is found again.
    let variant_of =
        |format: Format| dir.join(format!("{stem}-{width}x{height}.{}", format.extension()));
    for format in [Format::Png, Format::Jpeg] {
        if let Ok(bytes) = std::fs::read(variant_of(format)) {
            let (width, height) = image::ImageReader::with_format(
                std::io::Cursor::new(&bytes),
                format.image_format(),
            )
            .into_dimensions()
            .unwrap_or((width, height));
            return Ok(Encoded {
                media_type: format.media_type().to_string(),
                base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
                width,
                height,
            });
        }
    }
    let bytes = read(&image.path)?;
    let encode_error = |detail: String| MediaError::Encode {
        path: image.path.clone(),
        detail,
    };
    let decoded = image::load_from_memory_with_format(&bytes, stored_format.image_format())
        .map_err(|e| encode_error(e.to_string()))?;
    let made = resize::shrink(
        &decoded,
        stored_format,
        limits,
        resize::PNG_PREFERRED_BYTES,
        Effort::Send,
    )
    .map_err(|e| encode_error(e.to_string()))?;
    // Best effort: without the copy the next request makes it again.
    let _ = crate::config::private_fs::write_atomic(&variant_of(made.format), &made.bytes);
    Ok(Encoded {
        media_type: made.format.media_type().to_string(),
        base64: base64::engine::general_purpose::STANDARD.encode(&made.bytes),
        width: made.width,
        height: made.height,
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests;
