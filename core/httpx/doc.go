// Package httpx is the HTTP plumbing shared by Cairn's interfaces (the KV HTTP API and
// the S3 API): request IDs, panic recovery, access logs, Prometheus metrics, body limits,
// a status-recording ResponseWriter, and helpers to write whole and streamed responses.
// Against hostile clients it adds GuardBody (body read deadlines that move with the bytes
// received, and a memory budget that ReadBody charges) and ConnLimiter, a listener that
// bounds connections per listener and per address (see docs/operating.md, "Limits and
// security").
//
// Middlewares have the shape func(http.Handler) http.Handler and compose with Chain, the
// first one outermost. The server's order is:
//
//	h := httpx.Chain(router,
//		httpx.RequestID,                       // id first: everything after logs it
//		httpx.AccessLog(logger, httpx.AccessLogOptions{}),
//		httpx.Metrics(registry, "kv"),         // *stats.Registry
//		httpx.Recover(logger, writeKVError500), // innermost: the others see its 500
//		httpx.LimitBody(maxBody),
//		httpx.GuardBody(httpx.BodyLimits{ReadTimeout: 30 * time.Second, MinRate: 1024}),
//	)
//	router.Use(httpx.RouteName)                // tells Metrics and AccessLog the route
//
// Metrics labels requests by mux route name, never by path, so the number of series stays
// bounded: the router records the matched route's name with the RouteName middleware
// (mux runs router middlewares only after a match), unnamed routes are "unnamed", and
// requests that match no route, including mux's 404 and 405 answers, are "unmatched".
//
// The middlewares share one *ResponseWriter per request: the first that needs it wraps
// the writer (RequestID does so as part of its own allocation), the others find it and
// reuse it, so the whole chain adds a fixed, small number of allocations per request.
// ResponseWriter keeps http.Flusher, io.ReaderFrom and, through Unwrap,
// http.ResponseController working for the handlers below it.
//
// Non-streamed responses must carry Content-Length (clients of the reference tell
// streamed from whole responses by Transfer-Encoding: chunked): use WriteFull. Streamed
// responses send each logical piece as its own HTTP chunk: use ChunkWriter.
package httpx
