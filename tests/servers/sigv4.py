"""AWS Signature Version 4 verification for S3 requests, written from AWS's published algorithm
(https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html) independently of
the reader under test, so that a test server can refuse what real S3 would refuse: a wrong
secret, a misparsed key, a missing or unsigned session token, a stale date.

self_test() recomputes AWS's "GET Object" example (its canonical request hash and signature);
the servers refuse to start when it does not match."""
import datetime
import hashlib
import hmac
import re
import urllib.parse

EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
_AUTH = re.compile(r"^AWS4-HMAC-SHA256 Credential=([^/,\s]+)/(\d{8})/([^/,\s]+)/([^/,\s]+)/"
                   r"aws4_request,\s*SignedHeaders=([a-z0-9;\-]+),\s*Signature=([0-9a-f]{64})$")


class Refused(Exception):
    """Why S3 would refuse the request: an S3 error code and a sentence."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def _hmac(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def _uri_encode(text, keep_slash):
    # Every byte but the unreserved characters (A-Z a-z 0-9 - _ . ~) is %XX-encoded, upper case.
    return urllib.parse.quote(text, safe="/~" if keep_slash else "~")


def canonical_request(method, path, query, headers, signed, payload_hash):
    """`path` and `query` as sent (percent-encoded); `headers` lower-case names to values."""
    uri = _uri_encode(urllib.parse.unquote(path), True)
    pairs = sorted((_uri_encode(urllib.parse.unquote(k), False), _uri_encode(urllib.parse.unquote(v), False))
                   for k, _, v in (p.partition("=") for p in query.split("&") if p))
    canonical_query = "&".join(f"{k}={v}" for k, v in pairs)
    lines = "".join(f"{name}:{' '.join(headers[name].split())}\n" for name in signed)
    return "\n".join([method, uri, canonical_query, lines, ";".join(signed), payload_hash])


def signature(secret, date, region, service, amz_date, canonical):
    key = _hmac(("AWS4" + secret).encode(), date)
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    scope = f"{date}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, _sha256(canonical.encode())])
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def verify(method, target, headers, body, credentials, region, now=None, max_skew_s=900):
    """Raises Refused unless the request is signed by one of `credentials` ({access key:
    (secret, session token or None)}) for `region` and service s3. `target` is the request line's
    path and query; `headers` maps lower-case names to values."""
    auth = headers.get("authorization")
    if not auth:
        raise Refused("AccessDenied", "no Authorization header")
    m = _AUTH.match(auth.strip())
    if not m:
        raise Refused("AuthorizationHeaderMalformed", "not a SigV4 Authorization header: " + auth)
    access_key, date, req_region, service, signed_list, sig = m.groups()
    if access_key not in credentials:
        raise Refused("InvalidAccessKeyId", f"unknown access key {access_key}")
    secret, token = credentials[access_key]
    if req_region != region or service != "s3":
        raise Refused("AuthorizationHeaderMalformed", f"scope {req_region}/{service}, expected {region}/s3")
    signed = signed_list.split(";")
    if signed != sorted(signed) or "host" not in signed or "x-amz-date" not in signed:
        raise Refused("AccessDenied", "SignedHeaders must be sorted and include host and x-amz-date")
    for name in signed:
        if name not in headers:
            raise Refused("AccessDenied", f"signed header {name} is missing")
    amz_date = headers["x-amz-date"]
    if amz_date[:8] != date:
        raise Refused("SignatureDoesNotMatch", "the scope's date differs from x-amz-date")
    if now is not None:
        sent = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
        if abs((now - sent).total_seconds()) > max_skew_s:
            raise Refused("RequestTimeTooSkewed", f"x-amz-date {amz_date} is too far from now")
    sent_token = headers.get("x-amz-security-token")
    if token is not None and sent_token != token:
        raise Refused("InvalidToken", "the session token is missing or wrong")
    if token is None and sent_token is not None:
        raise Refused("InvalidToken", "a session token was sent for long-term keys")
    if sent_token is not None and "x-amz-security-token" not in signed:
        raise Refused("AccessDenied", "x-amz-security-token is not signed")
    payload = headers.get("x-amz-content-sha256")
    if payload is None:
        raise Refused("InvalidRequest", "x-amz-content-sha256 is missing")
    if payload != "UNSIGNED-PAYLOAD" and payload != _sha256(body):
        raise Refused("XAmzContentSHA256Mismatch", "x-amz-content-sha256 differs from the body's hash")
    path, _, query = target.partition("?")
    canonical = canonical_request(method, path, query, headers, signed, payload)
    expected = signature(secret, date, region, service, amz_date, canonical)
    if not hmac.compare_digest(expected, sig):
        raise Refused("SignatureDoesNotMatch", "the signature does not match")


def self_test():
    """AWS's published "Example: GET Object" (sig-v4-header-based-auth.html)."""
    headers = {"host": "examplebucket.s3.amazonaws.com", "range": "bytes=0-9",
               "x-amz-content-sha256": EMPTY_SHA256, "x-amz-date": "20130524T000000Z"}
    signed = ["host", "range", "x-amz-content-sha256", "x-amz-date"]
    canonical = canonical_request("GET", "/test.txt", "", headers, signed, EMPTY_SHA256)
    assert _sha256(canonical.encode()) == "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972"
    published = "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    assert signature(secret, "20130524", "us-east-1", "s3", "20130524T000000Z", canonical) == published
    headers["authorization"] = ("AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
                                "aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
                                "Signature=" + published)
    verify("GET", "/test.txt", headers, b"", {"AKIAIOSFODNN7EXAMPLE": (secret, None)}, "us-east-1")
    for wrong in ({"AKIAIOSFODNN7EXAMPLE": (secret[:-1] + "X", None)},
                  {"AKIAIOSFODNN7EXAMPLE": (secret, "a-token")}, {"OTHERKEY": (secret, None)}):
        try:
            verify("GET", "/test.txt", headers, b"", wrong, "us-east-1")
        except Refused:
            continue
        raise AssertionError("a wrong key or token was accepted")


if __name__ == "__main__":
    self_test()
    print("sigv4 self-test passed")
