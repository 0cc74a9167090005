use std::os::unix::fs::PermissionsExt;

use pretty_assertions::assert_eq;

use super::*;

/// A `width` x `height` PNG with some structure (bands and a grid), as a screenshot has.
pub fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        let line = x % 97 == 0 || y % 53 == 0;
        if line {
            image::Rgb([20, 20, 20])
        } else {
            image::Rgb([(x * 255 / width) as u8, (y * 255 / height) as u8, 200])
        }
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

#[test]
fn sizes_fit_each_api_keeping_proportions() {
    assert_eq!(fit(4000, 3000, &Limits::openai()), (1024, 768));
    assert_eq!(fit(4000, 3000, &Limits::anthropic()), (1238, 928));
    assert_eq!(fit(800, 600, &Limits::openai()), (800, 600));
    assert_eq!(fit(800, 600, &Limits::anthropic()), (800, 600));
    // A tall page: the long edge bounds it.
    assert_eq!(fit(1000, 5000, &Limits::openai()), (409, 2048));
    assert_eq!(fit(4000, 3000, &Limits::stored()), (2048, 1536));
}

#[test]
fn a_large_image_is_kept_once_downscaled_and_owner_only() {
    let dir = tempfile::tempdir().unwrap();
    let store = ImageStore::new(dir.path().join("images"));
    let bytes = png(3000, 2000);
    let image = store.add(&bytes, "shot.png").unwrap();
    assert_eq!((image.width, image.height), (2048, 1365));
    assert_eq!(image.name.as_deref(), Some("shot.png"));
    assert!(image.path.starts_with(store.dir()));
    let mode = std::fs::metadata(&image.path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let dir_mode = std::fs::metadata(store.dir()).unwrap().permissions().mode();
    assert_eq!(dir_mode & 0o777, 0o700);
    // The same picture again: the same file.
    assert_eq!(store.add(&bytes, "again.png").unwrap().path, image.path);

    let openai = encoded(&image, &Limits::openai()).unwrap();
    assert_eq!((openai.width, openai.height), (1152, 768));
    let anthropic = encoded(&image, &Limits::anthropic()).unwrap();
    assert_eq!((anthropic.width, anthropic.height), (1313, 875));
    // Made once, then read from the copy beside the stored file.
    let copies = std::fs::read_dir(store.dir()).unwrap().count();
    assert_eq!(copies, 3);
    assert_eq!(encoded(&image, &Limits::anthropic()).unwrap(), anthropic);
    assert!(openai.data_url().starts_with("data:image/png;base64,iVBOR"));
}

#[test]
fn a_small_image_goes_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let store = ImageStore::new(dir.path().to_path_buf());
    let bytes = png(40, 30);
    let image = store.add(&bytes, "icon.png").unwrap();
    assert_eq!(std::fs::read(&image.path).unwrap(), bytes);
    let sent = encoded(&image, &Limits::anthropic()).unwrap();
    use base64::Engine;
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(sent.base64)
            .unwrap(),
        bytes
    );
}

#[test]
fn what_is_not_an_image_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let store = ImageStore::new(dir.path().to_path_buf());
    let error = store
        .add(b"%PDF-1.7 ...", "doc.pdf")
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "doc.pdf is not an image the model APIs take (PNG, JPEG, GIF or WebP); convert it \
         first, e.g. `convert doc.pdf out.png`"
    );
    let broken = store
        .add(b"\x89PNG\r\n\x1a\nnot really", "x.png")
        .unwrap_err();
    assert!(matches!(broken, MediaError::Decode { .. }), "{broken}");
    assert_eq!(sniff(b"GIF89a..."), Some(Format::Gif));
    assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some(Format::Webp));
    assert!(has_image_extension(Path::new("a/B.JPG")));
    assert!(!has_image_extension(Path::new("a/b.svg")));
}

#[test]
fn a_missing_stored_file_is_an_error_naming_it() {
    let image = ImageRef {
        path: PathBuf::from("/nonexistent/ling-test/x.png"),
        media_type: "image/png".into(),
        width: 10,
        height: 10,
        name: None,
    };
    let error = encoded(&image, &Limits::openai()).unwrap_err().to_string();
    assert!(
        error.starts_with("cannot read the image /nonexistent/ling-test/x.png"),
        "{error}"
    );
    assert_eq!(image.label(), "x.png (10x10)");
}
