"""boto3 against a Cairn server started without --dialect.

Checks, through unmodified boto3 calls, what an S3 user sees with no server flags: user
metadata round trips (an empty value, mixed-case keys come back in lower case as AWS
answers), request ids on success and on error, copy with the COPY and REPLACE
metadata directives, conditional writes, and object and bucket tagging. Prints one line per check; exits 1 at the first failed one; the last
line is "PASS boto3".

Environment: CAIRN_S3_ENDPOINT (http://host:port), CAIRN_S3_KEY, CAIRN_S3_SECRET,
CAIRN_S3_BUCKET.
"""
import os
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def check(cond, what, detail=""):
    if not cond:
        print("FAIL", what, detail)
        sys.exit(1)
    print("ok", what)


def ids(resp, what):
    md = resp["ResponseMetadata"]
    headers = md.get("HTTPHeaders", {})
    check(md.get("RequestId"), what + ": RequestId", md)
    check(md.get("HostId"), what + ": HostId", md)
    check(headers.get("x-amz-request-id") == md["RequestId"], what + ": x-amz-request-id is the RequestId", headers)
    check(not any(k.startswith("x-obj-") for k in headers), what + ": no x-obj-* header", headers)


def error_of(call, what, **kw):
    try:
        call(**kw)
    except ClientError as e:
        return e.response
    check(False, what + ": an error was expected")


def client(signature_version=None):
    """A boto3 S3 client of the server and user the environment names (path style, no
    retries; signature_version "s3" or "s3v4" to force one)."""
    return boto3.client(
        "s3",
        endpoint_url=os.environ["CAIRN_S3_ENDPOINT"],
        aws_access_key_id=os.environ["CAIRN_S3_KEY"],
        aws_secret_access_key=os.environ["CAIRN_S3_SECRET"],
        region_name="us-east-1",
        config=Config(signature_version=signature_version, s3={"addressing_style": "path"},
                      retries={"max_attempts": 1, "mode": "standard"}),
    )


def main():
    s3 = client()
    b = os.environ["CAIRN_S3_BUCKET"]
    ids(s3.create_bucket(Bucket=b), "create_bucket")

    # Metadata: an empty value kept, keys as AWS returns them (lower case).
    meta = {"color": "red", "Mixed-Case": "Yes", "empty": ""}
    want = {"color": "red", "mixed-case": "Yes", "empty": ""}
    ids(s3.put_object(Bucket=b, Key="obj", Body=b"hello", ContentType="text/x-boto3", Metadata=meta), "put_object")
    h = s3.head_object(Bucket=b, Key="obj")
    ids(h, "head_object")
    check(h["Metadata"] == want, "head_object Metadata", h["Metadata"])
    check(h["ContentType"] == "text/x-boto3", "head_object ContentType", h["ContentType"])
    g = s3.get_object(Bucket=b, Key="obj")
    ids(g, "get_object")
    check(g["Metadata"] == want, "get_object Metadata", g["Metadata"])
    check(g["Body"].read() == b"hello", "get_object Body")

    # Request ids on errors: HEAD (no body) and GET (the XML body's RequestId).
    e = error_of(s3.head_object, "head_object missing", Bucket=b, Key="missing")
    check(e["Error"]["Code"] == "404", "head_object missing: 404", e["Error"])
    ids(e, "head_object missing")
    e = error_of(s3.get_object, "get_object missing", Bucket=b, Key="missing")
    check(e["Error"]["Code"] == "NoSuchKey", "get_object missing: NoSuchKey", e["Error"])
    ids(e, "get_object missing")

    # Copy, COPY directive (the default, and given): the source's metadata and type.
    for key, extra in (("copy-default", {}), ("copy-given", {"MetadataDirective": "COPY", "Metadata": {"ignored": "x"}})):
        ids(s3.copy_object(Bucket=b, Key=key, CopySource={"Bucket": b, "Key": "obj"}, **extra), "copy_object " + key)
        h = s3.head_object(Bucket=b, Key=key)
        check(h["Metadata"] == want and h["ContentType"] == "text/x-boto3", key + ": source metadata and type",
              (h["Metadata"], h["ContentType"]))

    # REPLACE: the request's metadata and type.
    s3.copy_object(Bucket=b, Key="copy-replace", CopySource={"Bucket": b, "Key": "obj"}, MetadataDirective="REPLACE",
                   Metadata={"Shade": "dark", "blank": ""}, ContentType="text/x-new")
    h = s3.head_object(Bucket=b, Key="copy-replace")
    check(h["Metadata"] == {"shade": "dark", "blank": ""} and h["ContentType"] == "text/x-new",
          "copy-replace: request metadata and type", (h["Metadata"], h["ContentType"]))
    check(s3.get_object(Bucket=b, Key="copy-replace")["Body"].read() == b"hello", "copy-replace: source bytes")

    # Onto itself: needs REPLACE.
    e = error_of(s3.copy_object, "self copy", Bucket=b, Key="obj", CopySource={"Bucket": b, "Key": "obj"})
    check(e["Error"]["Code"] == "InvalidRequest" and e["ResponseMetadata"]["HTTPStatusCode"] == 400,
          "self copy without REPLACE: 400 InvalidRequest", e["Error"])
    check("copy an object to itself without changing the object's metadata" in e["Error"]["Message"],
          "self copy: AWS's message", e["Error"]["Message"])
    ids(e, "self copy error")
    s3.copy_object(Bucket=b, Key="obj", CopySource={"Bucket": b, "Key": "obj"}, MetadataDirective="REPLACE",
                   Metadata={"color": "blue"})
    h = s3.head_object(Bucket=b, Key="obj")
    check(h["Metadata"] == {"color": "blue"}, "self copy with REPLACE: new metadata", h["Metadata"])

    # An unknown directive.
    e = error_of(s3.copy_object, "bad directive", Bucket=b, Key="bad", CopySource={"Bucket": b, "Key": "obj"},
                 MetadataDirective="MOVE")
    check(e["Error"]["Code"] == "InvalidArgument" and e["ResponseMetadata"]["HTTPStatusCode"] == 400,
          "unknown directive: 400 InvalidArgument", e["Error"])

    # Conditional writes (boto3's IfNoneMatch / IfMatch, 2024 on): create once, replace
    # only the version named.
    if "IfNoneMatch" in s3.meta.service_model.operation_model("PutObject").input_shape.members:
        first = s3.put_object(Bucket=b, Key="lock", Body=b"one", IfNoneMatch="*")
        e = error_of(s3.put_object, "create over an existing key", Bucket=b, Key="lock", Body=b"two", IfNoneMatch="*")
        check(e["Error"]["Code"] == "PreconditionFailed" and e["ResponseMetadata"]["HTTPStatusCode"] == 412,
              "IfNoneMatch * on an existing key: 412 PreconditionFailed", e["Error"])
        e = error_of(s3.put_object, "replace another version", Bucket=b, Key="lock", Body=b"two", IfMatch='"00"')
        check(e["Error"]["Code"] == "PreconditionFailed", "IfMatch another ETag: PreconditionFailed", e["Error"])
        s3.put_object(Bucket=b, Key="lock", Body=b"two", IfMatch=first["ETag"])
        check(s3.get_object(Bucket=b, Key="lock")["Body"].read() == b"two", "IfMatch the current ETag: replaced")
    else:
        print("boto3 " + boto3.__version__ + " has no IfNoneMatch: conditional writes not tried")
    tagging(s3, b)
    print("PASS boto3")


def tagging(s3, b):
    """Object and bucket tagging: Tagging= on put_object, copy_object and
    create_multipart_upload, get/put/delete_object_tagging, TagCount on GET, the limits,
    and put/get/delete_bucket_tagging."""
    s3.put_object(Bucket=b, Key="tagged", Body=b"tags", Tagging="project=cairn&stage=test%20run")
    got = s3.get_object_tagging(Bucket=b, Key="tagged")["TagSet"]
    check(got == [{"Key": "project", "Value": "cairn"}, {"Key": "stage", "Value": "test run"}],
          "put_object Tagging=: get_object_tagging", got)
    check(s3.get_object(Bucket=b, Key="tagged").get("TagCount") == 2, "get_object: TagCount 2")
    ids(s3.put_object_tagging(Bucket=b, Key="tagged", Tagging={"TagSet": [{"Key": "k", "Value": "v & w"}]}),
        "put_object_tagging")
    got = s3.get_object_tagging(Bucket=b, Key="tagged")["TagSet"]
    check(got == [{"Key": "k", "Value": "v & w"}], "put_object_tagging replaces the tags", got)
    e = error_of(s3.put_object_tagging, "eleven tags", Bucket=b, Key="tagged",
                 Tagging={"TagSet": [{"Key": "k%d" % i, "Value": "v"} for i in range(11)]})
    check(e["Error"]["Code"] == "BadRequest" and e["ResponseMetadata"]["HTTPStatusCode"] == 400,
          "eleven tags: 400 BadRequest", e["Error"])
    e = error_of(s3.put_object_tagging, "a reserved key", Bucket=b, Key="tagged",
                 Tagging={"TagSet": [{"Key": "aws:x", "Value": "v"}]})
    check(e["Error"]["Code"] == "InvalidTag", "aws: prefix: InvalidTag", e["Error"])
    check(s3.get_object_tagging(Bucket=b, Key="tagged")["TagSet"] == [{"Key": "k", "Value": "v & w"}],
          "a refused tagging changes nothing")
    # Copy: the source's tags by default, the request's with REPLACE.
    s3.copy_object(Bucket=b, Key="tag-copy", CopySource={"Bucket": b, "Key": "tagged"})
    check(s3.get_object_tagging(Bucket=b, Key="tag-copy")["TagSet"] == [{"Key": "k", "Value": "v & w"}],
          "copy_object: the source's tags")
    s3.copy_object(Bucket=b, Key="tag-copy", CopySource={"Bucket": b, "Key": "tagged"},
                   TaggingDirective="REPLACE", Tagging="new=1")
    check(s3.get_object_tagging(Bucket=b, Key="tag-copy")["TagSet"] == [{"Key": "new", "Value": "1"}],
          "copy_object TaggingDirective=REPLACE: the request's tags")
    # Multipart: the tags of the initiation, at completion.
    up = s3.create_multipart_upload(Bucket=b, Key="tag-mp", Tagging="part=whole")
    p = s3.upload_part(Bucket=b, Key="tag-mp", UploadId=up["UploadId"], PartNumber=1, Body=b"one part")
    s3.complete_multipart_upload(Bucket=b, Key="tag-mp", UploadId=up["UploadId"],
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": p["ETag"]}]})
    check(s3.get_object_tagging(Bucket=b, Key="tag-mp")["TagSet"] == [{"Key": "part", "Value": "whole"}],
          "create_multipart_upload Tagging=: the object's tags")
    s3.delete_object_tagging(Bucket=b, Key="tagged")
    check(s3.get_object_tagging(Bucket=b, Key="tagged")["TagSet"] == [], "delete_object_tagging")
    check("TagCount" not in s3.get_object(Bucket=b, Key="tagged"), "no TagCount without tags")
    # Bucket tags.
    e = error_of(s3.get_bucket_tagging, "bucket without tags", Bucket=b)
    check(e["Error"]["Code"] == "NoSuchTagSet" and e["ResponseMetadata"]["HTTPStatusCode"] == 404,
          "get_bucket_tagging without tags: 404 NoSuchTagSet", e["Error"])
    tags = [{"Key": "team", "Value": "storage"}, {"Key": "cost", "Value": ""}]
    s3.put_bucket_tagging(Bucket=b, Tagging={"TagSet": tags})
    got = s3.get_bucket_tagging(Bucket=b)["TagSet"]
    check(got == tags, "put/get_bucket_tagging", got)
    s3.delete_bucket_tagging(Bucket=b)
    e = error_of(s3.get_bucket_tagging, "bucket tags deleted", Bucket=b)
    check(e["Error"]["Code"] == "NoSuchTagSet", "delete_bucket_tagging", e["Error"])


if __name__ == "__main__":
    main()
