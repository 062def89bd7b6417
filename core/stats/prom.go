package stats

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Prometheus metric names.
const (
	MetricHTTPRequests   = "cairn_http_requests_total"               // counter{api,route,method,code}
	MetricHTTPDuration   = "cairn_http_request_duration_seconds"     // histogram{api,route,method,code}
	MetricObjectOps      = "cairn_object_operations_total"           // counter{op}
	MetricObjectDuration = "cairn_object_operation_duration_seconds" // histogram{op}
	MetricHookFailures   = "cairn_hook_failures_total"               // counter{hook}
	MetricEvents         = "cairn_events_total"                      // counter{name}, from Registry.Counter
)

// latencyBuckets are the upper bounds, in seconds, of the latency histograms: 100 µs to 30 s.
var latencyBuckets = []float64{
	.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30,
}

// opMetrics are the pre-resolved children of one object operation.
type opMetrics struct {
	n prometheus.Counter
	d prometheus.Observer
}

// observe counts one operation that took d.
func (o opMetrics) observe(d time.Duration) {
	o.n.Inc()
	o.d.Observe(d.Seconds())
}

// httpKey identifies one label combination of the HTTP metrics.
type httpKey struct {
	api, route, method string
	code               int
}

// httpChild holds the resolved metrics of one httpKey.
type httpChild struct {
	n prometheus.Counter
	d prometheus.Observer
}

// promMetrics are the Prometheus side of a Registry.
type promMetrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	// httpCache maps label combinations to resolved children; it is replaced, never
	// modified, so lookups need no lock. httpMu serialises replacements.
	httpCache atomic.Pointer[map[httpKey]*httpChild]
	httpMu    sync.Mutex

	get, put, del                 opMetrics
	precommitFail, postcommitFail prometheus.Counter
}

// newPromMetrics builds the Prometheus registry of r.
func newPromMetrics(r *Registry) *promMetrics {
	p := &promMetrics{reg: prometheus.NewRegistry()}
	p.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricHTTPRequests,
		Help: "HTTP requests served, by interface, mux route name, method and status code.",
	}, []string{"api", "route", "method", "code"})
	p.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    MetricHTTPDuration,
		Help:    "Time to serve HTTP requests, by interface, mux route name, method and status code.",
		Buckets: latencyBuckets,
	}, []string{"api", "route", "method", "code"})
	objOps := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricObjectOps,
		Help: "Object operations coordinated, by operation (get, put, delete).",
	}, []string{"op"})
	objDur := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    MetricObjectDuration,
		Help:    "Time to coordinate object operations, by operation (get, put, delete).",
		Buckets: latencyBuckets,
	}, []string{"op"})
	hooks := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricHookFailures,
		Help: "Commit hook failures, by hook kind (precommit, postcommit).",
	}, []string{"hook"})
	for _, op := range []struct {
		m    *opMetrics
		name string
	}{{&p.get, "get"}, {&p.put, "put"}, {&p.del, "delete"}} {
		op.m.n = objOps.WithLabelValues(op.name)
		op.m.d = objDur.WithLabelValues(op.name)
	}
	p.precommitFail = hooks.WithLabelValues("precommit")
	p.postcommitFail = hooks.WithLabelValues("postcommit")
	empty := map[httpKey]*httpChild{}
	p.httpCache.Store(&empty)

	p.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		p.httpRequests, p.httpDuration, objOps, objDur, hooks,
		&eventsCollector{r: r, desc: prometheus.NewDesc(MetricEvents,
			"Events counted by named counters other packages created with Registry.Counter.",
			[]string{"name"}, nil)},
	)
	return p
}

// Prometheus returns the Registry's own Prometheus registry (not the global default),
// for the server to expose with promhttp and for other packages to register collectors
// on. It already holds the Go and process collectors and Cairn's HTTP, object, hook and
// event metrics.
func (r *Registry) Prometheus() *prometheus.Registry { return r.prom.reg }

// ObserveHTTP records one HTTP request for the Prometheus HTTP metrics: api is the
// interface ("kv", "s3"), route the mux route name (never the raw path: labels must stay
// few), method the request method (unknown methods are recorded as "other"), code the
// status sent and d the time taken. Only core/httpx's Metrics middleware calls it. After
// the first request of each label combination it is lock-free and allocation-free.
func (r *Registry) ObserveHTTP(api, route, method string, code int, d time.Duration) {
	k := httpKey{api: api, route: route, method: normMethod(method), code: code}
	c := (*r.prom.httpCache.Load())[k]
	if c == nil {
		c = r.prom.httpChild(k)
	}
	c.n.Inc()
	c.d.Observe(d.Seconds())
}

// httpChild resolves and caches the metrics of k.
func (p *promMetrics) httpChild(k httpKey) *httpChild {
	p.httpMu.Lock()
	defer p.httpMu.Unlock()
	old := *p.httpCache.Load()
	if c := old[k]; c != nil {
		return c
	}
	code := codeLabel(k.code)
	c := &httpChild{
		n: p.httpRequests.WithLabelValues(k.api, k.route, k.method, code),
		d: p.httpDuration.WithLabelValues(k.api, k.route, k.method, code),
	}
	m := make(map[httpKey]*httpChild, len(old)+1)
	for kk, v := range old {
		m[kk] = v
	}
	m[k] = c
	p.httpCache.Store(&m)
	return c
}

// normMethod maps method to a constant string, "other" for anything non-standard, so a
// client cannot create label values.
func normMethod(method string) string {
	switch method {
	case "GET":
		return "GET"
	case "HEAD":
		return "HEAD"
	case "PUT":
		return "PUT"
	case "POST":
		return "POST"
	case "DELETE":
		return "DELETE"
	case "OPTIONS":
		return "OPTIONS"
	case "PATCH":
		return "PATCH"
	case "TRACE":
		return "TRACE"
	case "CONNECT":
		return "CONNECT"
	}
	return "other"
}

// codeLabel returns the label value of status code: its decimal form for 100..599,
// "other" otherwise.
func codeLabel(code int) string {
	if code < 100 || code > 599 {
		return "other"
	}
	return strconv.Itoa(code)
}

// eventsCollector exports the counters created with Registry.Counter.
type eventsCollector struct {
	r    *Registry
	desc *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c *eventsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *eventsCollector) Collect(ch chan<- prometheus.Metric) {
	c.r.mu.RLock()
	defer c.r.mu.RUnlock()
	for _, name := range c.r.custom {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue,
			float64(c.r.counters[name].Total()), name)
	}
}
