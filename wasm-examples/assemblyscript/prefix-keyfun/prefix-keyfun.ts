// prefix-keyfun: a chash_keyfun that places keys by their prefix, so that related keys
// share partitions. The placement hash is
//
//   SHA-1( uint32_be(len(bucket)) || bucket || prefix )
//
// where prefix is the part of the key before the first ":" (the whole key if it has
// none) and lengths count UTF-8 bytes. "user42:profile" and "user42:orders" in one bucket
// hash alike; the same key in another bucket does not. The bucket type is not part of
// the hash. The function reads nothing but its input: no clock, no random source.

export { cairn_alloc, cairn_abi_v1 } from "@cairn/hook-sdk";
import { handleKeyFun, KeyFunInput, Result, Sha1, utf8Bytes } from "@cairn/hook-sdk";

/** keyPrefix returns the part of key before the first ":", or key itself. */
function keyPrefix(key: string): string {
  const i = key.indexOf(":");
  return i < 0 ? key : key.substring(0, i);
}

/** prefix_hash is the chash_keyfun: 20 bytes, read by the host as a big-endian integer. */
export function prefix_hash(ptr: usize, len: i32): i32 {
  return handleKeyFun(ptr, len, (req: KeyFunInput): Result => {
    const bucket = utf8Bytes(req.bucket);
    // The bucket's length first, so ("ab", "c…") and ("a", "bc…") cannot collide.
    const n = new Uint8Array(4);
    n[0] = <u8>(bucket.length >>> 24);
    n[1] = <u8>(bucket.length >>> 16);
    n[2] = <u8>(bucket.length >>> 8);
    n[3] = <u8>bucket.length;
    const digest = new Sha1().update(n).update(bucket).updateText(keyPrefix(req.key)).digest();
    return Result.keyHash(digest);
  });
}
