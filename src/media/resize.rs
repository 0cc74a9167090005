//! Fitting an image within an API's bounds ([`Limits`], [`fit`]) and re-encoding it: PNG while
//! that stays small enough (screenshots keep their sharp text), else JPEG, smaller again until
//! the bytes fit.

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::{CompressionType, FilterType as PngFilter, PngEncoder};
use image::imageops::FilterType;
use image::{DynamicImage, ImageEncoder};

use super::Format;

/// A PNG larger than this is sent as JPEG instead (a photograph, where PNG is several times
/// larger for no visible gain). The copy kept in the store stays PNG up to the byte limit, so
/// each API's copy is made from a lossless one.
pub const PNG_PREFERRED_BYTES: usize = 1 << 20;
/// The JPEG quality of a re-encoded image.
const JPEG_QUALITY: u8 = 85;
/// The most raw bytes of one image: Anthropic refuses an image over 5 MB of base64, which is
/// 3.75 MB before it; OpenAI allows more.
const MAX_IMAGE_BYTES: usize = 3_750_000;

/// The bounds an API reads an image within; a larger one is downscaled before it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_long_edge: u32,
    pub max_short_edge: u32,
    pub max_pixels: u64,
    pub max_bytes: usize,
}

impl Limits {
    /// OpenAI's chat completions and Responses APIs: at `detail: high` (the default for a large
    /// image) the image is fitted in 2048 x 2048, then its short side in 768; more is not read.
    pub const fn openai() -> Self {
        Self {
            max_long_edge: 2048,
            max_short_edge: 768,
            max_pixels: u64::MAX,
            max_bytes: MAX_IMAGE_BYTES,
        }
    }

    /// Anthropic's Messages API: an image over 1568 pixels on its long edge or about 1.15
    /// megapixels is downscaled by the API before the model sees it.
    pub const fn anthropic() -> Self {
        Self {
            max_long_edge: 1568,
            max_short_edge: u32::MAX,
            max_pixels: 1_150_000,
            max_bytes: MAX_IMAGE_BYTES,
        }
    }

    /// What is kept in `LING_HOME/images`: the most any API reads.
    pub const fn stored() -> Self {
        Self {
            max_long_edge: super::STORED_LONG_EDGE,
            max_short_edge: u32::MAX,
            max_pixels: u64::MAX,
            max_bytes: MAX_IMAGE_BYTES,
        }
    }
}

/// The size a `width` x `height` image is sent at within `limits`: the same when it fits, else
/// scaled down keeping its proportions.
pub fn fit(width: u32, height: u32, limits: &Limits) -> (u32, u32) {
    let (long, short) = (width.max(height), width.min(height));
    let mut scale = 1.0_f64;
    if long > limits.max_long_edge {
        scale = scale.min(f64::from(limits.max_long_edge) / f64::from(long));
    }
    if short > limits.max_short_edge {
        scale = scale.min(f64::from(limits.max_short_edge) / f64::from(short));
    }
    let pixels = u64::from(width) * u64::from(height);
    if pixels > limits.max_pixels {
        scale = scale.min((limits.max_pixels as f64 / pixels as f64).sqrt());
    }
    if scale >= 1.0 {
        return (width, height);
    }
    let side = |n: u32| ((f64::from(n) * scale).floor() as u32).max(1);
    (side(width), side(height))
}

/// An image made for sending.
pub struct Made {
    pub bytes: Vec<u8>,
    pub format: Format,
    pub width: u32,
    pub height: u32,
}

/// How hard to compress a PNG.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effort {
    /// Fast: the copy kept in the store, read only here.
    Keep,
    /// zlib's default level with adaptive filters: a copy sent to an API, made once and sent
    /// with every request after. A 1024 x 768 screenshot comes out a third the size of the fast
    /// setting's (and within 1% of the best setting's, at a third of its time).
    Send,
}

/// `image` downscaled to fit `limits` and encoded: PNG when the source was a lossless format
/// and the PNG stays within `png_up_to` bytes, else JPEG; smaller again while the bytes are
/// over the limit. Downscaling is by area (a triangle filter whose support grows with the
/// ratio), which keeps thin lines and text legible without the ringing of sharper filters.
pub fn shrink(
    image: &DynamicImage,
    source: Format,
    limits: &Limits,
    png_up_to: usize,
    effort: Effort,
) -> Result<Made, ShrinkError> {
    let (mut width, mut height) = fit(image.width(), image.height(), limits);
    let lossless = matches!(source, Format::Png | Format::Gif | Format::Webp);
    for _ in 0..8 {
        let resized = if (width, height) == (image.width(), image.height()) {
            image.clone()
        } else {
            image.resize_exact(width, height, FilterType::Triangle)
        };
        if lossless {
            let png = encode_png(&resized, effort)?;
            if png.len() <= png_up_to.min(limits.max_bytes) {
                return Ok(Made {
                    bytes: png,
                    format: Format::Png,
                    width,
                    height,
                });
            }
        }
        let jpeg = encode_jpeg(&resized)?;
        if jpeg.len() <= limits.max_bytes {
            return Ok(Made {
                bytes: jpeg,
                format: Format::Jpeg,
                width,
                height,
            });
        }
        (width, height) = (width * 3 / 4, height * 3 / 4);
        if width == 0 || height == 0 {
            break;
        }
    }
    Err(ShrinkError::TooLarge {
        max_bytes: limits.max_bytes,
    })
}

/// Why [`shrink`] made no image.
#[derive(Debug, thiserror::Error)]
pub enum ShrinkError {
    /// Even the eighth downscaling is over the limit (an image of extreme proportions).
    #[error("it does not fit in {max_bytes} bytes even when downscaled")]
    TooLarge { max_bytes: usize },
    /// The encoder refused the pixels.
    #[error("{0}")]
    Encode(#[from] image::ImageError),
}

fn encode_png(image: &DynamicImage, effort: Effort) -> Result<Vec<u8>, ShrinkError> {
    let mut out = Vec::new();
    let encoder = match effort {
        Effort::Keep => PngEncoder::new(&mut out),
        Effort::Send => {
            PngEncoder::new_with_quality(&mut out, CompressionType::Default, PngFilter::Adaptive)
        }
    };
    let (width, height) = (image.width(), image.height());
    let result = if image.color().has_alpha() {
        let rgba = image.to_rgba8();
        encoder.write_image(&rgba, width, height, image::ExtendedColorType::Rgba8)
    } else {
        let rgb = image.to_rgb8();
        encoder.write_image(&rgb, width, height, image::ExtendedColorType::Rgb8)
    };
    result?;
    Ok(out)
}

fn encode_jpeg(image: &DynamicImage) -> Result<Vec<u8>, ShrinkError> {
    let mut out = Vec::new();
    // JPEG has no alpha: transparent parts go on black, as most viewers show them.
    let rgb = image.to_rgb8();
    JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY).write_image(
        &rgb,
        image.width(),
        image.height(),
        image::ExtendedColorType::Rgb8,
    )?;
    Ok(out)
}
