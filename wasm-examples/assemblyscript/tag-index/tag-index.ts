// tag-index: a precommit that indexes a JSON document's "tags". For a put of
// {"title": "…", "tags": ["go", "wasm"]} it stores the value unchanged with one
// tag_bin index entry per tag and a Tag-Count metadata entry. A value that is not a JSON
// object, or whose tags are not a list of non-empty strings, is rejected (403).
// Deletes pass.

export { cairn_alloc, cairn_abi_v1 } from "@cairn/hook-sdk";
import { CommitInput, Result, handlePrecommit } from "@cairn/hook-sdk";

export function index_tags(ptr: usize, len: i32): i32 {
  return handlePrecommit(ptr, len, (req: CommitInput): Result => {
    if (req.isDelete()) return Result.accept();
    const value = req.object.first();
    const doc = value.json();
    if (doc === null || !doc.isObject()) return Result.reject("value is not a JSON object");
    const tags = doc.get("tags");
    if (tags === null) return Result.accept();
    if (!tags.isArray()) return Result.reject("tags must be a list");
    value.removeIndex("tag_bin");
    for (let i = 0; i < tags.length; i++) {
      const tag = tags.at(i)!;
      if (!tag.isString() || tag.asString().length == 0) return Result.reject("tags must be non-empty strings");
      value.addIndex("tag_bin", tag.asString());
    }
    value.setMeta("Tag-Count", tags.length.toString());
    return Result.replace(req.object);
  });
}
