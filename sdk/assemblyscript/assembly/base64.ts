// Standard base64 (RFC 4648 section 4, with padding), as the host writes "vclock" and
// "data_b64".

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// ch returns the base64 character for the sextet v.
function ch(v: u32): u8 {
  return <u8>ALPHABET.charCodeAt(<i32>v);
}

/** base64Encode returns the standard, padded base64 form of data. */
export function base64Encode(data: Uint8Array): string {
  const n = data.length;
  const out = new Uint8Array(((n + 2) / 3) * 4);
  let i = 0;
  let o = 0;
  while (i + 3 <= n) {
    const v = (<u32>data[i] << 16) | (<u32>data[i + 1] << 8) | <u32>data[i + 2];
    out[o] = ch((v >> 18) & 63);
    out[o + 1] = ch((v >> 12) & 63);
    out[o + 2] = ch((v >> 6) & 63);
    out[o + 3] = ch(v & 63);
    i += 3;
    o += 4;
  }
  const rest = n - i;
  if (rest > 0) {
    let v = <u32>data[i] << 16;
    if (rest == 2) v |= <u32>data[i + 1] << 8;
    out[o] = ch((v >> 18) & 63);
    out[o + 1] = ch((v >> 12) & 63);
    out[o + 2] = rest == 2 ? ch((v >> 6) & 63) : 0x3d;
    out[o + 3] = 0x3d;
  }
  return String.UTF8.decodeUnsafe(out.dataStart, <usize>out.length);
}

// sextet returns the value of one base64 character, or -1.
function sextet(c: u32): i32 {
  if (c >= 0x41 && c <= 0x5a) return <i32>(c - 0x41);
  if (c >= 0x61 && c <= 0x7a) return <i32>(c - 0x61 + 26);
  if (c >= 0x30 && c <= 0x39) return <i32>(c - 0x30 + 52);
  if (c == 0x2b) return 62;
  if (c == 0x2f) return 63;
  return -1;
}

/**
 * base64Decode decodes standard, padded base64. It returns null when s is not valid
 * base64 (wrong length, a character outside the alphabet, misplaced padding, or
 * non-zero bits after the last byte).
 */
export function base64Decode(s: string): Uint8Array | null {
  const n = s.length;
  if (n % 4 != 0) return null;
  if (n == 0) return new Uint8Array(0);
  let pad = 0;
  if (s.charCodeAt(n - 1) == 0x3d) pad++;
  if (s.charCodeAt(n - 2) == 0x3d) pad++;
  const out = new Uint8Array((n / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < n; i += 4) {
    const last = i + 4 == n;
    const a = sextet(<u32>s.charCodeAt(i));
    const b = sextet(<u32>s.charCodeAt(i + 1));
    let c = 0;
    let d = 0;
    if (last && pad == 2) {
      if (s.charCodeAt(i + 2) != 0x3d) return null;
    } else {
      c = sextet(<u32>s.charCodeAt(i + 2));
      if (c < 0) return null;
    }
    if (last && pad >= 1) {
      if (s.charCodeAt(i + 3) != 0x3d) return null;
    } else {
      d = sextet(<u32>s.charCodeAt(i + 3));
      if (d < 0) return null;
    }
    if (a < 0 || b < 0) return null;
    const v = (<u32>a << 18) | (<u32>b << 12) | (<u32>c << 6) | <u32>d;
    out[o++] = <u8>(v >> 16);
    if (last && pad == 2) {
      if ((v & 0xffff) != 0) return null;
      break;
    }
    out[o++] = <u8>(v >> 8);
    if (last && pad == 1) {
      if ((v & 0xff) != 0) return null;
      break;
    }
    out[o++] = <u8>v;
  }
  return out;
}
