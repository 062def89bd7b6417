package main

// Golden wire transcripts of the 1.4-style counter resource.

import "testing"

func init() { goldenCaseSets = append(goldenCaseSets, counterGoldenCases) }

func counterGoldenCases() []goldenCase {
	counters := func(bucket string, updates ...string) func(*testing.T, *child) {
		return func(t *testing.T, s *child) {
			s.setProps(t, bucket, `{"allow_mult":true}`)
			for _, u := range updates {
				expect(t, s.postCounter(t, "/buckets/"+bucket+"/counters/k", u), 204, nil)
			}
		}
	}
	return []goldenCase{
		{name: "counter_post", setup: counters("g-cnt-post"),
			req: "POST /buckets/g-cnt-post/counters/k HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\n4"},
		{name: "counter_post_returnvalue", setup: counters("g-cnt-rv", "4"),
			req: "POST /buckets/g-cnt-rv/counters/k?returnvalue=true HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\n-2"},
		{name: "counter_get", setup: counters("g-cnt-get", "4", "-2"),
			req: "GET /buckets/g-cnt-get/counters/k HTTP/1.1\n"},
		{name: "counter_409",
			req: "POST /buckets/g-cnt-plain/counters/k HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\n1"},
		{name: "counter_400_body",
			req: "POST /buckets/g-cnt-bad/counters/k HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\nabc"},
		{name: "counter_404", req: "GET /buckets/g-cnt-missing/counters/k HTTP/1.1\n"},
		{name: "counter_301", req: "GET /types/default/buckets/g-cnt/datatypes/k HTTP/1.1\n"},
		{name: "counter_301_riak", riak: true, req: "POST /types/default/buckets/g%20cnt/datatypes/k HTTP/1.1\nContent-Type: application/json\n\n1"},
	}
}
