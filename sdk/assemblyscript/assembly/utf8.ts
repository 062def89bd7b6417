// UTF-8 validation and conversion helpers.

/** isValidUTF8 reports whether the bytes are well-formed UTF-8 (RFC 3629). */
export function isValidUTF8(b: Uint8Array): bool {
  return validUTF8At(b.dataStart, b.length);
}

/** validUTF8At reports whether len bytes at ptr are well-formed UTF-8. */
export function validUTF8At(ptr: usize, len: i32): bool {
  let i = 0;
  while (i < len) {
    const c = <u32>load<u8>(ptr + <usize>i);
    if (c < 0x80) {
      i++;
      continue;
    }
    const n = utf8SeqLen(ptr, i, len);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

/**
 * utf8SeqLen returns the length (2..4) of the well-formed multi-byte sequence starting at
 * byte i, or 0 when it is malformed (overlong, surrogate, beyond U+10FFFF or truncated).
 */
export function utf8SeqLen(ptr: usize, i: i32, len: i32): i32 {
  const c = <u32>load<u8>(ptr + <usize>i);
  let n = 0;
  let lo: u32 = 0x80;
  let hi: u32 = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    else if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    else if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > len) return 0;
  const c1 = <u32>load<u8>(ptr + <usize>(i + 1));
  if (c1 < lo || c1 > hi) return 0;
  for (let k = 2; k < n; k++) {
    const ck = <u32>load<u8>(ptr + <usize>(i + k));
    if ((ck & 0xc0) != 0x80) return 0;
  }
  return n;
}

/** utf8Bytes encodes s as UTF-8; unpaired surrogates become U+FFFD. */
export function utf8Bytes(s: string): Uint8Array {
  return Uint8Array.wrap(String.UTF8.encode(s, false, String.UTF8.ErrorMode.REPLACE));
}

/** utf8String decodes UTF-8 bytes to a string. */
export function utf8String(b: Uint8Array): string {
  return String.UTF8.decodeUnsafe(b.dataStart, <usize>b.length);
}

/**
 * asciiLower returns s with A-Z changed to a-z and every other character unchanged. Header
 * and index names are ASCII; this avoids String.toLowerCase's Unicode tables.
 */
export function asciiLower(s: string): string {
  const n = s.length;
  let i = 0;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) break;
    i++;
  }
  if (i == n) return s;
  const out = new Array<i32>(n);
  for (let j = 0; j < n; j++) {
    const c = s.charCodeAt(j);
    unchecked((out[j] = c >= 0x41 && c <= 0x5a ? c + 0x20 : c));
  }
  return String.fromCharCodes(out);
}
