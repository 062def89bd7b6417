"""boto3 against a Cairn server: S3 Object Lock.

Checks, through unmodified boto3 calls: create_bucket with ObjectLockEnabledForBucket
(versioning Enabled and kept so), get/put_object_lock_configuration with a default
retention, put_object with ObjectLockMode/ObjectLockRetainUntilDate/ObjectLockLegalHoldStatus
and what head_object answers, get/put_object_retention and get/put_object_legal_hold
by version, permanent deletes refused while protected (403 AccessDenied), the
governance bypass (BypassGovernanceRetention), delete markers still allowed,
delete_objects respecting the locks, and a bucket without Object Lock refusing it.
Prints one line per check; exits 1 at the first failed one; the last line is
"PASS boto3 object lock".

Environment: CAIRN_S3_ENDPOINT (http://host:port), CAIRN_S3_KEY, CAIRN_S3_SECRET,
CAIRN_S3_BUCKET.
"""
import datetime
import os


from clients import client, check, error_of


def main():
    s3 = client()
    b = os.environ["CAIRN_S3_BUCKET"]
    now = datetime.datetime.now(datetime.timezone.utc)

    s3.create_bucket(Bucket=b, ObjectLockEnabledForBucket=True)
    check(s3.get_bucket_versioning(Bucket=b).get("Status") == "Enabled", "a lock bucket is versioned")
    e = error_of(s3.put_bucket_versioning, "suspend", Bucket=b, VersioningConfiguration={"Status": "Suspended"})
    check(e["Error"]["Code"] == "InvalidBucketState", "versioning cannot be suspended", e["Error"])
    cfg = s3.get_object_lock_configuration(Bucket=b)["ObjectLockConfiguration"]
    check(cfg.get("ObjectLockEnabled") == "Enabled" and "Rule" not in cfg, "get_object_lock_configuration", cfg)
    s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration={
        "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}})
    cfg = s3.get_object_lock_configuration(Bucket=b)["ObjectLockConfiguration"]
    check(cfg["Rule"]["DefaultRetention"] == {"Mode": "GOVERNANCE", "Days": 1}, "default retention set", cfg)

    # The default retention applies to a plain put.
    v1 = s3.put_object(Bucket=b, Key="gov", Body=b"one")["VersionId"]
    h = s3.head_object(Bucket=b, Key="gov")
    until = h.get("ObjectLockRetainUntilDate")
    check(h.get("ObjectLockMode") == "GOVERNANCE" and until and until > now + datetime.timedelta(hours=23),
          "head_object: the default retention", h)
    r = s3.get_object_retention(Bucket=b, Key="gov", VersionId=v1)["Retention"]
    check(r["Mode"] == "GOVERNANCE" and r["RetainUntilDate"] == until, "get_object_retention", r)
    e = error_of(s3.delete_object, "locked delete", Bucket=b, Key="gov", VersionId=v1)
    check(e["Error"]["Code"] == "AccessDenied" and e["ResponseMetadata"]["HTTPStatusCode"] == 403,
          "delete of a governance version: 403", e["Error"])
    d = s3.delete_object(Bucket=b, Key="gov")
    check(d.get("DeleteMarker") is True, "a delete marker over it is allowed", d)
    e = error_of(s3.put_object_retention, "shorten", Bucket=b, Key="gov", VersionId=v1,
                 Retention={"Mode": "GOVERNANCE", "RetainUntilDate": now + datetime.timedelta(minutes=5)})
    check(e["Error"]["Code"] == "AccessDenied", "shortening governance without bypass: 403", e["Error"])
    s3.put_object_retention(Bucket=b, Key="gov", VersionId=v1, BypassGovernanceRetention=True,
                            Retention={"Mode": "GOVERNANCE", "RetainUntilDate": now + datetime.timedelta(minutes=5)})
    check(s3.get_object_retention(Bucket=b, Key="gov", VersionId=v1)["Retention"]["RetainUntilDate"]
          < now + datetime.timedelta(minutes=6), "shortened with the bypass")
    s3.delete_object(Bucket=b, Key="gov", VersionId=v1, BypassGovernanceRetention=True)
    e = error_of(s3.head_object, "gone", Bucket=b, Key="gov", VersionId=v1)
    check(e["ResponseMetadata"]["HTTPStatusCode"] == 404, "deleted with the bypass")

    # Compliance, asked for on the put, and a legal hold.
    until = (now + datetime.timedelta(hours=1)).replace(microsecond=0)
    v2 = s3.put_object(Bucket=b, Key="comp", Body=b"two", ObjectLockMode="COMPLIANCE",
                       ObjectLockRetainUntilDate=until, ObjectLockLegalHoldStatus="ON")["VersionId"]
    h = s3.head_object(Bucket=b, Key="comp", VersionId=v2)
    check(h.get("ObjectLockMode") == "COMPLIANCE" and h.get("ObjectLockRetainUntilDate") == until
          and h.get("ObjectLockLegalHoldStatus") == "ON", "head_object: explicit lock", h)
    check(s3.get_object_legal_hold(Bucket=b, Key="comp", VersionId=v2)["LegalHold"]["Status"] == "ON",
          "get_object_legal_hold")
    e = error_of(s3.delete_object, "compliance delete", Bucket=b, Key="comp", VersionId=v2,
                 BypassGovernanceRetention=True)
    check(e["Error"]["Code"] == "AccessDenied", "compliance cannot be bypassed", e["Error"])
    s3.put_object_legal_hold(Bucket=b, Key="comp", VersionId=v2, LegalHold={"Status": "OFF"})
    check(s3.get_object_legal_hold(Bucket=b, Key="comp", VersionId=v2)["LegalHold"]["Status"] == "OFF",
          "legal hold lifted")
    e = error_of(s3.put_object_retention, "weaken", Bucket=b, Key="comp", VersionId=v2, BypassGovernanceRetention=True,
                 Retention={"Mode": "GOVERNANCE", "RetainUntilDate": until + datetime.timedelta(hours=1)})
    check(e["Error"]["Code"] == "AccessDenied", "compliance cannot become governance", e["Error"])
    res = s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "comp", "VersionId": v2}]},
                            BypassGovernanceRetention=True)
    errs = res.get("Errors", [])
    check(len(errs) == 1 and errs[0]["Code"] == "AccessDenied" and not res.get("Deleted"),
          "delete_objects: the compliance version stays", res)
    e = error_of(s3.put_object, "bad mode", Bucket=b, Key="x", Body=b"", ObjectLockMode="FOREVER",
                 ObjectLockRetainUntilDate=until)
    check(e["Error"]["Code"] == "InvalidArgument", "put_object with an unknown mode: 400", e["Error"])

    # A bucket without Object Lock.
    plain = b + "-plain"
    s3.create_bucket(Bucket=plain)
    e = error_of(s3.get_object_lock_configuration, "none", Bucket=plain)
    check(e["Error"]["Code"] == "ObjectLockConfigurationNotFoundError", "no lock configuration: 404", e["Error"])
    e = error_of(s3.put_object, "lock on plain", Bucket=plain, Key="k", Body=b"", ObjectLockLegalHoldStatus="ON")
    check(e["Error"]["Code"] == "InvalidRequest", "a lock header on a plain bucket: 400", e["Error"])
    e = error_of(s3.put_object_lock_configuration, "unversioned", Bucket=plain,
                 ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"})
    check(e["Error"]["Code"] == "InvalidBucketState", "lock on an unversioned bucket: 409", e["Error"])
    print("PASS boto3 object lock")


if __name__ == "__main__":
    main()
