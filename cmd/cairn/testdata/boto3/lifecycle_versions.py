"""boto3 against a Cairn server started with --lifecycle-day=1s (a lifecycle "day" is a
second) and a short --lifecycle-interval: the lifecycle actions on versions.

Checks, through unmodified boto3 calls, in a bucket with Object Lock (so versioned):
a configuration with NoncurrentVersionExpiration (and NewerNoncurrentVersions) and
ExpiredObjectDeleteMarker round trips; the worker then removes the noncurrent versions
(the current version stays, and so does a noncurrent version under a legal hold until
the hold is released), removes a delete marker once it is its key's only version (the
key is then gone from list_object_versions), and keeps the newest noncurrent version
under a NewerNoncurrentVersions=1 rule. Prints one line per check; exits 1 at the
first failed one; the last line is "PASS lifecycle versions".

Environment: CAIRN_S3_ENDPOINT (http://host:port), CAIRN_S3_KEY, CAIRN_S3_SECRET,
CAIRN_S3_BUCKET.
"""
import os
import time

from clients import check, client

RULES = [
    {"ID": "noncurrent", "Filter": {"Prefix": "doc"}, "Status": "Enabled",
     "NoncurrentVersionExpiration": {"NoncurrentDays": 2}},
    {"ID": "keep-one", "Filter": {"Prefix": "kept/"}, "Status": "Enabled",
     "NoncurrentVersionExpiration": {"NoncurrentDays": 2, "NewerNoncurrentVersions": 1}},
    {"ID": "gone", "Filter": {"Prefix": "gone"}, "Status": "Enabled",
     "NoncurrentVersionExpiration": {"NoncurrentDays": 1}},
    {"ID": "markers", "Filter": {"Prefix": "g"}, "Status": "Enabled",
     "Expiration": {"ExpiredObjectDeleteMarker": True}},
]


def versions(s3, b, key):
    """The version ids of key, newest first, a delete marker's prefixed "D"."""
    r = s3.list_object_versions(Bucket=b, Prefix=key)
    out = [(v["LastModified"], v["VersionId"]) for v in r.get("Versions", []) if v["Key"] == key]
    out += [(m["LastModified"], "D" + m["VersionId"]) for m in r.get("DeleteMarkers", []) if m["Key"] == key]
    return [v for _, v in sorted(out, reverse=True)]


def wait_for(what, cond, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if cond():
            break
        time.sleep(0.25)
    check(cond(), what)


def main():
    s3 = client()
    b = os.environ["CAIRN_S3_BUCKET"]
    s3.create_bucket(Bucket=b, ObjectLockEnabledForBucket=True)

    held = s3.put_object(Bucket=b, Key="doc", Body=b"v1", ObjectLockLegalHoldStatus="ON")["VersionId"]
    s3.put_object(Bucket=b, Key="doc", Body=b"v2")
    s3.put_object(Bucket=b, Key="doc", Body=b"v3")
    current = s3.put_object(Bucket=b, Key="doc", Body=b"v4")["VersionId"]
    s3.put_object(Bucket=b, Key="gone", Body=b"deleted")
    marker = s3.delete_object(Bucket=b, Key="gone")
    check(marker.get("DeleteMarker") is True, "a delete marker over gone", marker)
    kept = [s3.put_object(Bucket=b, Key="kept/k", Body=b"%d" % i)["VersionId"] for i in range(3)]
    check(len(versions(s3, b, "doc")) == 4 and len(versions(s3, b, "gone")) == 2, "versions written")

    s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": RULES})
    got = s3.get_bucket_lifecycle_configuration(Bucket=b)["Rules"]
    check(got == RULES, "put/get_bucket_lifecycle_configuration with versions actions", got)

    wait_for("the noncurrent versions expired but the held one",
             lambda: versions(s3, b, "doc") == [current, held])
    check(s3.get_object(Bucket=b, Key="doc")["Body"].read() == b"v4", "the current version stays")
    check(s3.get_object(Bucket=b, Key="doc", VersionId=held)["Body"].read() == b"v1",
          "the version under a legal hold stays")
    wait_for("the lone delete marker was removed: the key has no versions",
             lambda: versions(s3, b, "gone") == [])
    wait_for("NewerNoncurrentVersions=1 keeps the newest noncurrent version",
             lambda: versions(s3, b, "kept/k") == [kept[2], kept[1]])

    s3.put_object_legal_hold(Bucket=b, Key="doc", VersionId=held, LegalHold={"Status": "OFF"})
    wait_for("the version released from its hold expired", lambda: versions(s3, b, "doc") == [current])
    print("PASS lifecycle versions")


if __name__ == "__main__":
    main()
