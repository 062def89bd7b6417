"""boto3 against a Cairn server started with --lifecycle-day=1s (a lifecycle "day" is a
second) and a short --lifecycle-interval.

Checks, through unmodified boto3 calls: put/get/delete_bucket_lifecycle_configuration
(a bucket without one is NoSuchLifecycleConfiguration; AWS's codes for a bad rule and
for a transition), the Expiration that head_object and put_object report, and the
worker: an object under an expiring rule's prefix disappears, one outside stays, an
incomplete multipart upload under an abort rule is aborted and one elsewhere stays.
Prints one line per check; exits 1 at the first failed one; the last line is
"PASS lifecycle".

Environment: CAIRN_S3_ENDPOINT (http://host:port), CAIRN_S3_KEY, CAIRN_S3_SECRET,
CAIRN_S3_BUCKET.
"""
import os
import time

from botocore.exceptions import ClientError

from clients import client, check, error_of


def exists(s3, b, key):
    try:
        s3.head_object(Bucket=b, Key=key)
        return True
    except ClientError as e:
        if e.response["ResponseMetadata"]["HTTPStatusCode"] == 404:
            return False
        raise


def uploads(s3, b):
    return [u["Key"] for u in s3.list_multipart_uploads(Bucket=b).get("Uploads", [])]


RULES = [
    {"ID": "expire-logs", "Filter": {"Prefix": "logs/"}, "Status": "Enabled", "Expiration": {"Days": 2}},
    {"ID": "tagged", "Filter": {"And": {"Prefix": "t/", "Tags": [{"Key": "tmp", "Value": "yes"}]}},
     "Status": "Enabled", "Expiration": {"Days": 2}},
    {"ID": "abort-uploads", "Filter": {"Prefix": "uploads/"}, "Status": "Enabled",
     "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 2}},
    {"ID": "off", "Filter": {"Prefix": "keep/"}, "Status": "Disabled", "Expiration": {"Days": 1}},
]


def main():
    s3 = client()
    b = os.environ["CAIRN_S3_BUCKET"]
    s3.create_bucket(Bucket=b)

    e = error_of(s3.get_bucket_lifecycle_configuration, "no configuration", Bucket=b)
    check(e["Error"]["Code"] == "NoSuchLifecycleConfiguration" and e["ResponseMetadata"]["HTTPStatusCode"] == 404,
          "get without a configuration: 404 NoSuchLifecycleConfiguration", e["Error"])
    bad = [dict(RULES[0], ID="a" * 256)]
    e = error_of(s3.put_bucket_lifecycle_configuration, "ID too long", Bucket=b, LifecycleConfiguration={"Rules": bad})
    check(e["Error"]["Code"] == "InvalidArgument", "ID of 256 characters: InvalidArgument", e["Error"])
    e = error_of(s3.put_bucket_lifecycle_configuration, "same ID", Bucket=b,
                 LifecycleConfiguration={"Rules": [RULES[0], RULES[0]]})
    check(e["Error"]["Code"] == "InvalidArgument", "same ID twice: InvalidArgument", e["Error"])
    trans = [dict(RULES[0], Transitions=[{"Days": 30, "StorageClass": "GLACIER"}])]
    e = error_of(s3.put_bucket_lifecycle_configuration, "transition", Bucket=b, LifecycleConfiguration={"Rules": trans})
    check(e["Error"]["Code"] == "NotImplemented" and e["ResponseMetadata"]["HTTPStatusCode"] == 501,
          "a transition: 501 NotImplemented", e["Error"])

    s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": RULES})
    got = s3.get_bucket_lifecycle_configuration(Bucket=b)["Rules"]
    check(got == RULES, "put/get_bucket_lifecycle_configuration", got)

    r = s3.put_object(Bucket=b, Key="logs/a", Body=b"expires")
    check('rule-id="expire-logs"' in r.get("Expiration", ""), "put_object: Expiration names the rule", r.get("Expiration"))
    h = s3.head_object(Bucket=b, Key="logs/a")
    check('rule-id="expire-logs"' in h.get("Expiration", "") and 'expiry-date="' in h["Expiration"],
          "head_object: Expiration", h.get("Expiration"))
    s3.put_object(Bucket=b, Key="keep/b", Body=b"stays")
    check("Expiration" not in s3.head_object(Bucket=b, Key="keep/b"), "no Expiration outside the rules")
    s3.put_object(Bucket=b, Key="t/tagged", Body=b"tagged", Tagging="tmp=yes")
    s3.put_object(Bucket=b, Key="t/untagged", Body=b"untagged")
    s3.create_multipart_upload(Bucket=b, Key="uploads/x")
    other = s3.create_multipart_upload(Bucket=b, Key="elsewhere")

    deadline = time.time() + 30
    while time.time() < deadline:
        if not exists(s3, b, "logs/a") and not exists(s3, b, "t/tagged") and "uploads/x" not in uploads(s3, b):
            break
        time.sleep(0.25)
    check(not exists(s3, b, "logs/a"), "the object under the rule's prefix expired")
    check(not exists(s3, b, "t/tagged"), "the object with the rule's tag expired")
    check(exists(s3, b, "keep/b"), "the object under a disabled rule stays")
    check(exists(s3, b, "t/untagged"), "the object without the rule's tag stays")
    left = uploads(s3, b)
    check("uploads/x" not in left and "elsewhere" in left, "the upload under the abort rule was aborted", left)
    s3.abort_multipart_upload(Bucket=b, Key="elsewhere", UploadId=other["UploadId"])

    s3.delete_bucket_lifecycle(Bucket=b)
    e = error_of(s3.get_bucket_lifecycle_configuration, "deleted", Bucket=b)
    check(e["Error"]["Code"] == "NoSuchLifecycleConfiguration", "delete_bucket_lifecycle", e["Error"])
    print("PASS lifecycle")


if __name__ == "__main__":
    main()
