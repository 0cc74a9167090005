//! Image content as the programs' wires carry it (a stream-json `image` block's base64
//! `source`, an ACP `image` block's `data`): decoded into the bytes the session host attaches
//! ([`crate::session::Host::attach_image_bytes`]), named for what is said about it. Whether
//! the bytes are a picture is the image store's to check, by their content.

use base64::Engine;

/// The bytes of base64 `data`, and the name of the `n`th image of a message (`image 1.png`,
/// the extension from `media_type`); an error that says what to send instead.
pub fn decoded(data: &str, media_type: &str, n: usize) -> Result<(Vec<u8>, String), String> {
    let extension = match media_type {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        other => {
            return Err(format!(
                "an image of type {other:?} cannot go to the model; send image/png, image/jpeg, \
                 image/gif or image/webp"
            ));
        }
    };
    // Some encoders wrap base64 in lines; the engine takes none.
    let compact: String = data.split_ascii_whitespace().collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .map_err(|e| format!("image {n}: its data is not valid base64 ({e})"))?;
    if bytes.is_empty() {
        return Err(format!("image {n} has no data"));
    }
    Ok((bytes, format!("image {n}.{extension}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_images_are_decoded_and_named_and_bad_ones_said() {
        let (bytes, name) = decoded("iVBO\nRw0K", "image/png", 2).unwrap();
        assert_eq!(bytes, b"\x89PNG\r\n");
        assert_eq!(name, "image 2.png");
        assert!(
            decoded("%%", "image/png", 1)
                .unwrap_err()
                .contains("not valid base64")
        );
        assert!(decoded("", "image/png", 1).unwrap_err().contains("no data"));
        assert!(
            decoded("AAAA", "image/tiff", 1)
                .unwrap_err()
                .contains("image/tiff")
        );
    }
}
