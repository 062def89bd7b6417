"""boto3 against a Cairn server: bucket versioning.

Checks, through unmodified boto3 calls: get/put_bucket_versioning, version ids on
put_object, copy_object, multipart completion and delete_object, delete markers
(get and head of a key behind one), get/head/delete with VersionId, copy from a
version, list_object_versions (with and without the paginator, a prefix and a
delimiter), delete_objects with VersionId, the null version across Suspended, and
tags and ACLs per version. Prints one line per check; exits 1 at the first failed
one; the last line is "PASS boto3 versioning".

Environment: CAIRN_S3_ENDPOINT (http://host:port), CAIRN_S3_KEY, CAIRN_S3_SECRET,
CAIRN_S3_BUCKET.
"""
import os


from clients import client, check, error_of


def versions(s3, b, **kw):
    """Every (key, version id, latest, is marker) of the bucket, through the paginator:
    the versions in listing order, then the delete markers in listing order (the SDK
    parses a page's Version and DeleteMarker entries into two lists)."""
    vs, ms = [], []
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=b, **kw):
        vs += [(v["Key"], v["VersionId"], v["IsLatest"], False) for v in page.get("Versions", [])]
        ms += [(m["Key"], m["VersionId"], m["IsLatest"], True) for m in page.get("DeleteMarkers", [])]
    return vs + ms


def main():
    s3 = client()
    b = os.environ["CAIRN_S3_BUCKET"]
    s3.create_bucket(Bucket=b)
    s3.put_object(Bucket=b, Key="k", Body=b"before")
    check("Status" not in s3.get_bucket_versioning(Bucket=b), "get_bucket_versioning: never enabled")
    e = error_of(s3.put_bucket_versioning, "bad status", Bucket=b, VersioningConfiguration={"Status": "Off"})
    check(e["Error"]["Code"] == "IllegalVersioningConfigurationException", "put_bucket_versioning Off: 400", e["Error"])
    s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Enabled"})
    check(s3.get_bucket_versioning(Bucket=b).get("Status") == "Enabled", "get_bucket_versioning: Enabled")

    v1 = s3.put_object(Bucket=b, Key="k", Body=b"one")["VersionId"]
    v2 = s3.put_object(Bucket=b, Key="k", Body=b"two")["VersionId"]
    check(v1 and v2 and v1 != v2 and "null" not in (v1, v2), "put_object: version ids", (v1, v2))
    g = s3.get_object(Bucket=b, Key="k")
    check(g["Body"].read() == b"two" and g["VersionId"] == v2, "get_object: the newest", g.get("VersionId"))
    for vid, want in (("null", b"before"), (v1, b"one"), (v2, b"two")):
        g = s3.get_object(Bucket=b, Key="k", VersionId=vid)
        check(g["Body"].read() == want and g["VersionId"] == vid, "get_object VersionId=" + vid)
        check(s3.head_object(Bucket=b, Key="k", VersionId=vid)["ContentLength"] == len(want), "head_object VersionId=" + vid)
    e = error_of(s3.get_object, "unknown version", Bucket=b, Key="k", VersionId="AAAAAAAAAAAAAAAAAAAAAA")
    check(e["Error"]["Code"] == "NoSuchVersion", "get_object unknown version: NoSuchVersion", e["Error"])

    # A delete makes a marker; the key reads as missing.
    d = s3.delete_object(Bucket=b, Key="k")
    marker = d.get("VersionId")
    check(d.get("DeleteMarker") is True and marker, "delete_object: a delete marker", d)
    e = error_of(s3.get_object, "behind a marker", Bucket=b, Key="k")
    check(e["Error"]["Code"] == "NoSuchKey", "get_object behind a marker: NoSuchKey", e["Error"])
    hdrs = e["ResponseMetadata"]["HTTPHeaders"]
    check(hdrs.get("x-amz-delete-marker") == "true" and hdrs.get("x-amz-version-id") == marker,
          "get_object behind a marker: its headers", hdrs)
    e = error_of(s3.head_object, "head behind a marker", Bucket=b, Key="k")
    check(e["Error"]["Code"] == "404", "head_object behind a marker: 404", e["Error"])
    e = error_of(s3.get_object, "get the marker", Bucket=b, Key="k", VersionId=marker)
    check(e["ResponseMetadata"]["HTTPStatusCode"] == 405, "get_object of a marker: 405", e["Error"])
    check(s3.list_objects_v2(Bucket=b).get("KeyCount") == 0, "list_objects_v2: nothing behind the marker")
    want = [("k", v2, False, False), ("k", v1, False, False), ("k", "null", False, False), ("k", marker, True, True)]
    got = versions(s3, b)
    check(got == want, "list_object_versions", got)
    check(versions(s3, b, PaginationConfig={"PageSize": 1}) == want, "list_object_versions in pages of 1")

    # Deleting the marker brings v2 back; deleting v2 for good makes v1 current.
    d = s3.delete_object(Bucket=b, Key="k", VersionId=marker)
    check(d.get("DeleteMarker") is True and d.get("VersionId") == marker, "delete_object the marker", d)
    check(s3.get_object(Bucket=b, Key="k")["Body"].read() == b"two", "the marker gone: v2 is back")
    s3.delete_object(Bucket=b, Key="k", VersionId=v2)
    check(s3.get_object(Bucket=b, Key="k")["Body"].read() == b"one", "v2 deleted: v1 is current")

    # Copy from a version; multipart completion answers a version id.
    c = s3.copy_object(Bucket=b, Key="restored", CopySource={"Bucket": b, "Key": "k", "VersionId": "null"})
    check(c.get("CopySourceVersionId") == "null" and c.get("VersionId"), "copy_object from the null version", c)
    check(s3.get_object(Bucket=b, Key="restored")["Body"].read() == b"before", "copy_object: the null version's data")
    up = s3.create_multipart_upload(Bucket=b, Key="mp")["UploadId"]
    etag = s3.upload_part(Bucket=b, Key="mp", UploadId=up, PartNumber=1, Body=b"part")["ETag"]
    done = s3.complete_multipart_upload(Bucket=b, Key="mp", UploadId=up,
                                        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    check(done.get("VersionId"), "complete_multipart_upload: a version id", done)

    # Tags and ACLs per version.
    s3.put_object_tagging(Bucket=b, Key="k", VersionId="null", Tagging={"TagSet": [{"Key": "v", "Value": "null"}]})
    t = s3.get_object_tagging(Bucket=b, Key="k", VersionId="null")
    check(t["TagSet"] == [{"Key": "v", "Value": "null"}] and t.get("VersionId") in (None, "null"), "tagging of the null version", t)
    check(s3.get_object_tagging(Bucket=b, Key="k")["TagSet"] == [], "the current version has no tags")
    s3.put_object_acl(Bucket=b, Key="k", VersionId=v1, ACL="public-read")
    grants = s3.get_object_acl(Bucket=b, Key="k", VersionId=v1)["Grants"]
    check(any(g["Grantee"].get("URI", "").endswith("AllUsers") for g in grants), "ACL of v1", grants)
    grants = s3.get_object_acl(Bucket=b, Key="k", VersionId="null")["Grants"]
    check(not any(g["Grantee"].get("URI", "").endswith("AllUsers") for g in grants), "ACL of the null version", grants)

    # Prefix and delimiter.
    for k in ("d/a", "d/b", "e"):
        s3.put_object(Bucket=b, Key=k, Body=b"x")
    r = s3.list_object_versions(Bucket=b, Delimiter="/")
    check([p["Prefix"] for p in r.get("CommonPrefixes", [])] == ["d/"], "list_object_versions: common prefixes", r.get("CommonPrefixes"))
    r = s3.list_object_versions(Bucket=b, Prefix="d/")
    check([v["Key"] for v in r.get("Versions", [])] == ["d/a", "d/b"], "list_object_versions: a prefix", r.get("Versions"))

    # Suspended: the null version is replaced; delete_objects with version ids.
    s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Suspended"})
    check(s3.get_bucket_versioning(Bucket=b).get("Status") == "Suspended", "get_bucket_versioning: Suspended")
    p = s3.put_object(Bucket=b, Key="k", Body=b"new null")
    check(p.get("VersionId") == "null", "put_object suspended: the null version", p)
    got = versions(s3, b, Prefix="k")
    check(got == [("k", "null", True, False), ("k", v1, False, False)], "suspended: the old null version replaced", got)
    r = s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "k", "VersionId": v1}, {"Key": "e"}]})
    deleted = {d["Key"]: d for d in r.get("Deleted", [])}
    check(deleted.get("k", {}).get("VersionId") == v1, "delete_objects with a version id", r)
    check(deleted.get("e", {}).get("DeleteMarker") is True and deleted["e"].get("DeleteMarkerVersionId") == "null",
          "delete_objects suspended: a null marker", r)

    # A bucket with versions left is not empty; emptied, it can be deleted.
    e = error_of(s3.delete_bucket, "delete a bucket with versions", Bucket=b)
    check(e["Error"]["Code"] == "BucketNotEmpty", "delete_bucket: BucketNotEmpty", e["Error"])
    objs = [{"Key": k, "VersionId": v} for k, v, _, _ in versions(s3, b)]
    r = s3.delete_objects(Bucket=b, Delete={"Objects": objs})
    check(len(r.get("Deleted", [])) == len(objs) and not r.get("Errors"), "delete_objects of every version", r)
    s3.delete_bucket(Bucket=b)
    print("PASS boto3 versioning")


if __name__ == "__main__":
    main()
