// SHA-1 (FIPS 180-4), for placement hashes: the reference system's default chash_keyfun
// is a SHA-1, and a 20-byte digest is exactly the widest chash_keyfun result.
// Not for security.

// rotl rotates x left by n bits.
// @ts-ignore: decorator
@inline
function rotl(x: u32, n: u32): u32 {
  return (x << n) | (x >>> (32 - n));
}

/** Sha1 computes a SHA-1 digest incrementally: update() any number of times, then digest(). */
export class Sha1 {
  private h0: u32 = 0x67452301;
  private h1: u32 = 0xefcdab89;
  private h2: u32 = 0x98badcfe;
  private h3: u32 = 0x10325476;
  private h4: u32 = 0xc3d2e1f0;
  // The pending partial block.
  private block: Uint8Array = new Uint8Array(64);
  private blockLen: i32 = 0;
  // Total bytes hashed.
  private total: u64 = 0;
  // The message schedule.
  private w: StaticArray<u32> = new StaticArray<u32>(80);

  /** update adds data to the hash. */
  update(data: Uint8Array): Sha1 {
    this.updateAt(data.dataStart, data.length);
    return this;
  }

  /** updateText adds s, encoded as UTF-8, to the hash. */
  updateText(s: string): Sha1 {
    const b = String.UTF8.encode(s, false, String.UTF8.ErrorMode.REPLACE);
    this.updateAt(changetype<usize>(b), b.byteLength);
    return this;
  }

  /** digest returns the 20-byte digest. The Sha1 must not be updated afterwards. */
  digest(): Uint8Array {
    const bits = this.total << 3;
    const pad = new Uint8Array(72);
    pad[0] = 0x80;
    // 0x80, then zeros up to 56 mod 64, then the bit length: 1..64 bytes before the length.
    const padLen = 64 - ((this.blockLen + 8) & 63);
    for (let i = 0; i < 8; i++) pad[padLen + i] = <u8>(bits >> (<u64>(56 - 8 * i)));
    this.updateAt(pad.dataStart, padLen + 8);
    const out = new Uint8Array(20);
    const hs: StaticArray<u32> = [this.h0, this.h1, this.h2, this.h3, this.h4];
    for (let i = 0; i < 5; i++) {
      const h = unchecked(hs[i]);
      out[4 * i] = <u8>(h >>> 24);
      out[4 * i + 1] = <u8>(h >>> 16);
      out[4 * i + 2] = <u8>(h >>> 8);
      out[4 * i + 3] = <u8>h;
    }
    return out;
  }

  private updateAt(ptr: usize, len: i32): void {
    this.total += <u64>len;
    let i = 0;
    if (this.blockLen > 0) {
      const take = min(64 - this.blockLen, len);
      memory.copy(this.block.dataStart + <usize>this.blockLen, ptr, <usize>take);
      this.blockLen += take;
      i = take;
      if (this.blockLen < 64) return;
      this.compress(this.block.dataStart);
      this.blockLen = 0;
    }
    while (i + 64 <= len) {
      this.compress(ptr + <usize>i);
      i += 64;
    }
    if (i < len) {
      memory.copy(this.block.dataStart, ptr + <usize>i, <usize>(len - i));
      this.blockLen = len - i;
    }
  }

  // compress processes one 64-byte block at p.
  private compress(p: usize): void {
    const w = this.w;
    for (let t = 0; t < 16; t++) {
      unchecked((w[t] = bswap<u32>(load<u32>(p + <usize>(t << 2)))));
    }
    for (let t = 16; t < 80; t++) {
      unchecked((w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1)));
    }
    let a = this.h0;
    let b = this.h1;
    let c = this.h2;
    let d = this.h3;
    let e = this.h4;
    for (let t = 0; t < 80; t++) {
      let f: u32;
      let k: u32;
      if (t < 20) {
        f = (b & c) | (~b & d);
        k = 0x5a827999;
      } else if (t < 40) {
        f = b ^ c ^ d;
        k = 0x6ed9eba1;
      } else if (t < 60) {
        f = (b & c) | (b & d) | (c & d);
        k = 0x8f1bbcdc;
      } else {
        f = b ^ c ^ d;
        k = 0xca62c1d6;
      }
      const tmp = rotl(a, 5) + f + e + k + unchecked(w[t]);
      e = d;
      d = c;
      c = rotl(b, 30);
      b = a;
      a = tmp;
    }
    this.h0 += a;
    this.h1 += b;
    this.h2 += c;
    this.h3 += d;
    this.h4 += e;
  }
}

/** sha1 returns the 20-byte SHA-1 digest of data. */
export function sha1(data: Uint8Array): Uint8Array {
  return new Sha1().update(data).digest();
}
