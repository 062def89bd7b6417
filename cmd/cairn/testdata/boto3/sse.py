"""boto3 against Cairn's server-side encryption.

Checks, through unmodified boto3 calls: SSE-S3 put/get/head/range/copy (ServerSideEncryption
echoed, ETag the MD5), SSE-C put/get/head/copy/multipart with and without the key (400
without, 403 with another, ETag not the MD5), a presigned GET with SSE-C headers, aws:kms
refused (501), and bucket default encryption (put/get/delete_bucket_encryption, objects
written after are SSE-S3). Prints one line per check; exits 1 at the first failed one; the
last line is "PASS boto3 sse".

Environment: CAIRN_S3_ENDPOINT (http://host:port), CAIRN_S3_KEY, CAIRN_S3_SECRET,
CAIRN_S3_BUCKET.
"""
import hashlib
import os
import urllib.request


from clients import client, check, error_of


def code_status(e):
    return e["Error"]["Code"], e["ResponseMetadata"]["HTTPStatusCode"]


def main():
    s3 = client(signature_version="s3v4")
    b = os.environ["CAIRN_S3_BUCKET"]
    s3.create_bucket(Bucket=b)
    data = os.urandom(200_000)  # several segments
    md5 = hashlib.md5(data).hexdigest()

    # SSE-S3.
    r = s3.put_object(Bucket=b, Key="s3", Body=data, ServerSideEncryption="AES256")
    check(r.get("ServerSideEncryption") == "AES256", "put_object SSE-S3 echoed", r)
    check(r["ETag"] == '"%s"' % md5, "SSE-S3 ETag is the MD5", r["ETag"])
    g = s3.get_object(Bucket=b, Key="s3")
    check(g.get("ServerSideEncryption") == "AES256" and g["Body"].read() == data, "get_object SSE-S3")
    h = s3.head_object(Bucket=b, Key="s3")
    check(h.get("ServerSideEncryption") == "AES256" and h["ContentLength"] == len(data), "head_object SSE-S3", h)
    g = s3.get_object(Bucket=b, Key="s3", Range="bytes=65530-131080")
    check(g["Body"].read() == data[65530:131081], "ranged get_object SSE-S3 across segments")
    r = s3.copy_object(Bucket=b, Key="s3-copy", CopySource={"Bucket": b, "Key": "s3"}, ServerSideEncryption="AES256")
    check(r.get("ServerSideEncryption") == "AES256", "copy_object SSE-S3 echoed", r)
    check(s3.get_object(Bucket=b, Key="s3-copy")["Body"].read() == data, "copy of an SSE-S3 object")
    r = s3.copy_object(Bucket=b, Key="s3", CopySource={"Bucket": b, "Key": "s3"}, ServerSideEncryption="AES256")
    check(r.get("ServerSideEncryption") == "AES256", "copy_object onto itself to re-encrypt")
    e = error_of(s3.put_object, "aws:kms", Bucket=b, Key="kms", Body=b"x", ServerSideEncryption="aws:kms")
    check(code_status(e) == ("NotImplemented", 501), "aws:kms is 501 NotImplemented", e["Error"])

    # SSE-C.
    key = os.urandom(32)
    other = os.urandom(32)
    sse_c = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": key}
    r = s3.put_object(Bucket=b, Key="c", Body=data, **sse_c)
    check(r.get("SSECustomerAlgorithm") == "AES256" and r.get("SSECustomerKeyMD5"), "put_object SSE-C echoed", r)
    check(r["ETag"] != '"%s"' % md5, "SSE-C ETag is not the MD5", r["ETag"])
    check(s3.get_object(Bucket=b, Key="c", **sse_c)["Body"].read() == data, "get_object SSE-C with the key")
    g = s3.get_object(Bucket=b, Key="c", Range="bytes=100-70000", **sse_c)
    check(g["Body"].read() == data[100:70001], "ranged get_object SSE-C")
    h = s3.head_object(Bucket=b, Key="c", **sse_c)
    check(h.get("SSECustomerAlgorithm") == "AES256", "head_object SSE-C with the key", h)
    e = error_of(s3.get_object, "get without the key", Bucket=b, Key="c")
    check(code_status(e) == ("InvalidRequest", 400), "get_object SSE-C without the key: 400 InvalidRequest", e["Error"])
    e = error_of(s3.head_object, "head without the key", Bucket=b, Key="c")
    check(e["ResponseMetadata"]["HTTPStatusCode"] == 400, "head_object SSE-C without the key: 400", e["ResponseMetadata"])
    e = error_of(s3.get_object, "get with another key", Bucket=b, Key="c", SSECustomerAlgorithm="AES256", SSECustomerKey=other)
    check(code_status(e) == ("AccessDenied", 403), "get_object SSE-C with another key: 403 AccessDenied", e["Error"])
    e = error_of(s3.copy_object, "copy without the source key", Bucket=b, Key="c-copy", CopySource={"Bucket": b, "Key": "c"})
    check(code_status(e) == ("InvalidRequest", 400), "copy_object of SSE-C without its key: 400", e["Error"])
    s3.copy_object(Bucket=b, Key="c-copy", CopySource={"Bucket": b, "Key": "c"},
                   CopySourceSSECustomerAlgorithm="AES256", CopySourceSSECustomerKey=key,
                   SSECustomerAlgorithm="AES256", SSECustomerKey=other)
    check(s3.get_object(Bucket=b, Key="c-copy", SSECustomerAlgorithm="AES256", SSECustomerKey=other)["Body"].read() == data,
          "copy_object SSE-C to SSE-C under another key")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": b, "Key": "c", **sse_c}, ExpiresIn=300)
    import base64
    req = urllib.request.Request(url, headers={
        "x-amz-server-side-encryption-customer-algorithm": "AES256",
        "x-amz-server-side-encryption-customer-key": base64.b64encode(key).decode(),
        "x-amz-server-side-encryption-customer-key-MD5": base64.b64encode(hashlib.md5(key).digest()).decode()})
    with urllib.request.urlopen(req) as resp:
        check(resp.read() == data, "presigned get_object with SSE-C headers")

    # SSE-C multipart: every part with the key; upload_part_copy from an SSE-S3 source.
    u = s3.create_multipart_upload(Bucket=b, Key="mp", **sse_c)
    check(u.get("SSECustomerAlgorithm") == "AES256", "create_multipart_upload SSE-C echoed", u)
    part1 = os.urandom(5 << 20)
    e = error_of(s3.upload_part, "part without the key", Bucket=b, Key="mp", UploadId=u["UploadId"], PartNumber=1, Body=part1)
    check(code_status(e) == ("InvalidRequest", 400), "upload_part without the upload's key: 400", e["Error"])
    p1 = s3.upload_part(Bucket=b, Key="mp", UploadId=u["UploadId"], PartNumber=1, Body=part1, **sse_c)
    p2 = s3.upload_part_copy(Bucket=b, Key="mp", UploadId=u["UploadId"], PartNumber=2,
                             CopySource={"Bucket": b, "Key": "s3"}, CopySourceRange="bytes=0-99999", **sse_c)
    done = s3.complete_multipart_upload(Bucket=b, Key="mp", UploadId=u["UploadId"], MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": p1["ETag"]}, {"PartNumber": 2, "ETag": p2["CopyPartResult"]["ETag"]}]})
    hdrs = done["ResponseMetadata"]["HTTPHeaders"]  # botocore's output shape has no SSECustomer* here
    check(hdrs.get("x-amz-server-side-encryption-customer-algorithm") == "AES256", "complete_multipart_upload SSE-C echoed", hdrs)
    got = s3.get_object(Bucket=b, Key="mp", **sse_c)["Body"].read()
    check(got == part1 + data[:100000], "multipart SSE-C object reads back")
    e = error_of(s3.get_object, "multipart without the key", Bucket=b, Key="mp")
    check(code_status(e) == ("InvalidRequest", 400), "multipart SSE-C object without the key: 400", e["Error"])

    # Bucket default encryption.
    e = error_of(s3.get_bucket_encryption, "no default", Bucket=b)
    check(code_status(e) == ("ServerSideEncryptionConfigurationNotFoundError", 404), "get_bucket_encryption without one: 404", e["Error"])
    e = error_of(s3.put_bucket_encryption, "kms default", Bucket=b, ServerSideEncryptionConfiguration={"Rules": [
        {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms"}}]})
    check(code_status(e) == ("NotImplemented", 501), "put_bucket_encryption aws:kms: 501", e["Error"])
    s3.put_bucket_encryption(Bucket=b, ServerSideEncryptionConfiguration={"Rules": [
        {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}, "BucketKeyEnabled": True}]})
    rules = s3.get_bucket_encryption(Bucket=b)["ServerSideEncryptionConfiguration"]["Rules"]
    check(rules[0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256", "get_bucket_encryption", rules)
    r = s3.put_object(Bucket=b, Key="dflt", Body=b"by default")
    check(r.get("ServerSideEncryption") == "AES256", "put_object in a bucket with default encryption is SSE-S3", r)
    s3.delete_bucket_encryption(Bucket=b)
    e = error_of(s3.get_bucket_encryption, "default deleted", Bucket=b)
    check(e["Error"]["Code"] == "ServerSideEncryptionConfigurationNotFoundError", "delete_bucket_encryption", e["Error"])
    r = s3.put_object(Bucket=b, Key="after", Body=b"clear")
    check("ServerSideEncryption" not in r, "put_object after delete_bucket_encryption is not encrypted", r)
    print("PASS boto3 sse")


if __name__ == "__main__":
    main()
