//! Standard base64 (RFC 4648 §4, alphabet `A–Z a–z 0–9 + /`, `=` padding), as the ABI
//! uses for `vclock` and `data_b64`. Written here because Debian ships no base64 crate.

use std::fmt;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Encodes `bytes` as padded standard base64.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity((bytes.len() + 2) / 3 * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Why a base64 text did not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset of the offending character (or the text length for a bad length).
    pub offset: usize,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "base64: invalid input at byte {}", self.offset)
    }
}

impl std::error::Error for DecodeError {}

fn sextet(c: u8) -> Option<u32> {
    match c {
        b'A'..=b'Z' => Some(u32::from(c - b'A')),
        b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Decodes standard base64. Padding is optional; any other character, a misplaced `=`
/// or a length that cannot come from an encoder is an error.
pub fn decode(text: &str) -> Result<Vec<u8>, DecodeError> {
    let raw = text.as_bytes();
    let body = match raw.iter().position(|&c| c == b'=') {
        Some(p) => {
            let pad = &raw[p..];
            if pad.len() > 2 || pad.iter().any(|&c| c != b'=') || raw.len() % 4 != 0 {
                return Err(DecodeError { offset: p });
            }
            &raw[..p]
        }
        None => raw,
    };
    if body.len() % 4 == 1 {
        return Err(DecodeError { offset: raw.len() });
    }
    let mut out = Vec::with_capacity(body.len() / 4 * 3 + 2);
    for (ci, chunk) in body.chunks(4).enumerate() {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            let v = sextet(c).ok_or(DecodeError { offset: ci * 4 + i })?;
            n |= v << (18 - 6 * i);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        let keep = chunk.len() - 1;
        // The bits of a partial group that fall outside the kept bytes must be zero.
        if keep < 3 && n & ((1 << (8 * (3 - keep))) - 1) != 0 {
            return Err(DecodeError {
                offset: ci * 4 + chunk.len() - 1,
            });
        }
        out.extend_from_slice(&bytes[..keep]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_rfc4648_vectors() {
        let cases: &[(&[u8], &str)] = &[
            (b"", ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"foobar", "Zm9vYmFy"),
            (&[0, 1, 2, 0xfe, 0xff], "AAEC/v8="),
            (&[0xfb, 0xff], "+/8="),
        ];
        for (bytes, text) in cases {
            assert_eq!(encode(bytes), *text, "encode {:?}", bytes);
            assert_eq!(decode(text).as_deref(), Ok(*bytes), "decode {}", text);
        }
    }

    #[test]
    fn decode_accepts_missing_padding() {
        assert_eq!(decode("Zg").unwrap(), b"f");
        assert_eq!(decode("Zm8").unwrap(), b"fo");
    }

    #[test]
    fn decode_rejects_bad_input() {
        let cases = [
            ("Z", 1),        // impossible length
            ("Zm9v!A==", 4), // bad character
            ("Zg=a", 2),     // data after padding
            ("Zg===", 2),    // too much padding
            ("Zm9=Yg==", 3), // padding in the middle
            ("Zh==", 1),     // non-zero trailing bits
            ("Zg=", 2),      // padded but not a multiple of 4
        ];
        for (text, offset) in cases {
            assert_eq!(decode(text), Err(DecodeError { offset }), "{}", text);
        }
    }
}
