"""boto3 and the browser-facing S3 features: CORS and POST object.

Checks put/get/delete_bucket_cors (and NoSuchCORSConfiguration without rules), a
preflight OPTIONS answered from the rules (and refused for another origin), and
generate_presigned_post under V4 and V2: the form, posted with urllib3 (the file
last, as browsers send it), stores the object with the fields' metadata and answers
the success_action_status; a file over the policy's content-length-range is refused
with EntityTooLarge and stores nothing; a form whose field is not in the policy is
refused. Prints one line per check; exits 1 at the first failed one; the last line is
"PASS boto3-browser".

Environment: CAIRN_S3_ENDPOINT (http://host:port), CAIRN_S3_KEY, CAIRN_S3_SECRET,
CAIRN_S3_BUCKET.
"""
import os

import urllib3
from botocore.exceptions import ClientError

from clients import client, check


def error_code(call, **kw):
    try:
        call(**kw)
    except ClientError as e:
        return e.response["Error"]["Code"]
    return None


def main():
    ep = os.environ["CAIRN_S3_ENDPOINT"]
    s3 = client(signature_version="s3v4")
    b = os.environ["CAIRN_S3_BUCKET"]
    http = urllib3.PoolManager(retries=False)
    s3.create_bucket(Bucket=b)

    # CORS.
    check(error_code(s3.get_bucket_cors, Bucket=b) == "NoSuchCORSConfiguration", "get_bucket_cors without rules")
    rules = [{"ID": "web", "AllowedOrigins": ["https://app.example"], "AllowedMethods": ["GET", "PUT"],
              "AllowedHeaders": ["*"], "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 600}]
    s3.put_bucket_cors(Bucket=b, CORSConfiguration={"CORSRules": rules})
    got = s3.get_bucket_cors(Bucket=b)["CORSRules"]
    check(got == rules, "get_bucket_cors returns the rules", got)
    bad = [{"AllowedOrigins": ["*"], "AllowedMethods": ["PATCH"]}]
    check(error_code(s3.put_bucket_cors, Bucket=b, CORSConfiguration={"CORSRules": bad}) == "InvalidRequest",
          "put_bucket_cors with PATCH is InvalidRequest")
    r = http.request("OPTIONS", f"{ep}/{b}/k", headers={"Origin": "https://app.example",
                     "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "content-type"})
    check(r.status == 200 and r.headers.get("Access-Control-Allow-Origin") == "https://app.example"
          and r.headers.get("Access-Control-Max-Age") == "600" and "PUT" in r.headers.get("Access-Control-Allow-Methods", ""),
          "preflight allowed", (r.status, dict(r.headers)))
    r = http.request("OPTIONS", f"{ep}/{b}/k", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "PUT"})
    check(r.status == 403 and b"AccessForbidden" in r.data, "preflight from another origin refused", (r.status, r.data))
    s3.delete_bucket_cors(Bucket=b)
    check(error_code(s3.get_bucket_cors, Bucket=b) == "NoSuchCORSConfiguration", "delete_bucket_cors")

    # POST object, V4 then V2.
    for sigver in ("s3v4", "s3"):
        c = client(signature_version=sigver)
        fields = {"acl": "private", "x-amz-meta-color": "green", "success_action_status": "201", "Content-Type": "text/plain"}
        conds = [{"acl": "private"}, {"x-amz-meta-color": "green"}, {"success_action_status": "201"}, {"Content-Type": "text/plain"},
                 ["content-length-range", 1, 100]]
        post = c.generate_presigned_post(b, sigver + "/${filename}", Fields=fields, Conditions=conds, ExpiresIn=600)
        form = dict(post["fields"])
        form["file"] = ("hello.txt", b"hello from boto3", "text/plain")
        r = http.request("POST", post["url"], fields=form)
        key = sigver + "/hello.txt"
        check(r.status == 201 and f"<Key>{key}</Key>".encode() in r.data, sigver + ": presigned post answers 201",
              (r.status, r.data))
        obj = s3.get_object(Bucket=b, Key=key)
        check(obj["Body"].read() == b"hello from boto3" and obj["Metadata"] == {"color": "green"}
              and obj["ContentType"] == "text/plain", sigver + ": the posted object", obj)
        form["file"] = ("big.txt", b"x" * 101, "text/plain")
        r = http.request("POST", post["url"], fields=form)
        check(r.status == 400 and b"EntityTooLarge" in r.data, sigver + ": over content-length-range", (r.status, r.data))
        check(error_code(s3.head_object, Bucket=b, Key=sigver + "/big.txt") == "404", sigver + ": nothing stored")
        form = dict(post["fields"])
        form["x-amz-meta-extra"] = "not in the policy"
        form["file"] = ("extra.txt", b"x", "text/plain")
        r = http.request("POST", post["url"], fields=form)
        check(r.status == 403 and b"Extra input fields: x-amz-meta-extra" in r.data, sigver + ": a field outside the policy",
              (r.status, r.data))
    print("PASS boto3-browser")


if __name__ == "__main__":
    main()
