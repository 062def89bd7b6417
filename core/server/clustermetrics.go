package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnkv/cairn/core/cluster"
)

// Prometheus metrics of a cluster node (none standalone).
const (
	MetricClusterApplyLag      = "cairn_cluster_apply_lag_messages"           // gauge{stream}
	MetricClusterApplied       = "cairn_cluster_applied_sequence"             // gauge{stream}
	MetricClusterCommits       = "cairn_cluster_commits_total"                // counter
	MetricClusterConflicts     = "cairn_cluster_commit_conflicts_total"       // counter
	MetricClusterUnknown       = "cairn_cluster_commit_outcome_unknown_total" // counter
	MetricClusterRecords       = "cairn_cluster_records_applied_total"        // counter
	MetricClusterServersUp     = "cairn_cluster_servers_reached"              // gauge
	MetricClusterServersConfig = "cairn_cluster_servers"                      // gauge
)

// clusterCollector exports a cluster node's replication figures (cluster.Metrics),
// read at each scrape without asking the cluster.
type clusterCollector struct {
	store                                           *cluster.Store
	lag, applied, commits, conflicts, unknown, recs *prometheus.Desc
	reached, servers                                *prometheus.Desc
}

// newClusterCollector returns the collector of store's metrics.
func newClusterCollector(store *cluster.Store) *clusterCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &clusterCollector{store: store,
		lag:       d(MetricClusterApplyLag, "Messages of a replication stream this node has yet to apply (replication lag), as the last message applied reported.", "stream"),
		applied:   d(MetricClusterApplied, "Last sequence of a replication stream applied to this node's replica.", "stream"),
		commits:   d(MetricClusterCommits, "Commits of replicated keys this node coordinated."),
		conflicts: d(MetricClusterConflicts, "Commits refused because another write changed a key since it was read (retried by the caller)."),
		unknown:   d(MetricClusterUnknown, "Commits answered 503 because their stream did not answer in time: they may or may not have been applied."),
		recs:      d(MetricClusterRecords, "Replicated records this node's appliers applied to its replica."),
		reached:   d(MetricClusterServersUp, "Cluster servers this node's embedded NATS server has routes to, itself included (0 with --nats-url)."),
		servers:   d(MetricClusterServersConfig, "Cluster servers this node knows of."),
	}
}

// Describe implements prometheus.Collector.
func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.lag, c.applied, c.commits, c.conflicts, c.unknown, c.recs, c.reached, c.servers} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.store.Metrics()
	for _, st := range m.Streams {
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(st.Lag), st.Name)
		ch <- prometheus.MustNewConstMetric(c.applied, prometheus.GaugeValue, float64(st.Applied), st.Name)
	}
	ch <- prometheus.MustNewConstMetric(c.commits, prometheus.CounterValue, float64(m.Commits))
	ch <- prometheus.MustNewConstMetric(c.conflicts, prometheus.CounterValue, float64(m.Conflicts))
	ch <- prometheus.MustNewConstMetric(c.unknown, prometheus.CounterValue, float64(m.Unknown))
	ch <- prometheus.MustNewConstMetric(c.recs, prometheus.CounterValue, float64(m.Applied))
	ch <- prometheus.MustNewConstMetric(c.reached, prometheus.GaugeValue, float64(m.ServersReached))
	ch <- prometheus.MustNewConstMetric(c.servers, prometheus.GaugeValue, float64(m.Servers))
}
