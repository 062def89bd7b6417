// Package s3xml reads and writes the XML bodies of the object-storage (S3) interface:
// access control policies and grant headers, bucket and object listings, the bucket
// location, error bodies, the CreateBucketConfiguration request body, the multipart
// upload documents (initiate, complete, list parts, list uploads), copy results, and
// multi-object delete requests and results.
//
// # Output
//
// Every document starts with the declaration
//
//	<?xml version="1.0" encoding="UTF-8"?>
//
// and a newline, followed by the root element on one line with no indentation (as
// AWS answers); result roots carry xmlns="http://s3.amazonaws.com/doc/2006-03-01/",
// the <Error> root carries none. Times are written as 2006-01-02T15:04:05.000Z in UTC,
// ETags in double quotes (literal '"' characters, which need no escaping in text).
// Text is escaped with &amp; &lt; &gt; and &#xD; for a carriage return (so that it
// survives XML end-of-line normalisation); characters XML 1.0 cannot carry at all
// (control characters other than tab, newline and carriage return, invalid UTF-8,
// U+FFFE, U+FFFF) are replaced by U+FFFD. Keys holding such characters can only be
// listed faithfully with encoding-type=url.
//
// The writers append to a byte slice by hand (no reflection), so a 1000-key listing
// costs a few allocations; see [Writer] for writing other result documents the same way.
//
// # Input
//
// Request bodies are parsed with encoding/xml. Element names are matched by local name
// in any namespace (or none). The caller bounds the body size; this package bounds the
// number of grants of an access control policy ([MaxGrants]).
//
// The package must not import net/http: header access goes through a getter function.
package s3xml
