#!/bin/sh
# Starts a local 3-node Cairn cluster on loopback ports (what `make cluster` runs; see
# docs/cluster.md, "Running a local 3-node cluster"). Each node keeps its data in
# $CLUSTER_DIR/n1..n3 (default ./data/cluster) and logs to $CLUSTER_DIR/nN.log. The
# script prints the nodes' URLs and stops them all on Ctrl-C (SIGINT) or SIGTERM.
#
# Environment: CAIRN (the binary, default ./bin/cairn), CLUSTER_DIR, CLUSTER_NAME
# (default local), CLUSTER_PARTITIONS (default 64), KV_PORT (first node's key-value
# port, default 8101; the others follow), S3_PORT (default 8181), ROUTE_PORT (embedded
# NATS routes, default 7241), CAIRN_FLAGS (extra flags for every node).
set -eu

CAIRN=${CAIRN:-./bin/cairn}
CLUSTER_DIR=${CLUSTER_DIR:-./data/cluster}
CLUSTER_NAME=${CLUSTER_NAME:-local}
CLUSTER_PARTITIONS=${CLUSTER_PARTITIONS:-64}
KV_PORT=${KV_PORT:-8101}
S3_PORT=${S3_PORT:-8181}
ROUTE_PORT=${ROUTE_PORT:-7241}
CAIRN_FLAGS=${CAIRN_FLAGS:-}

if [ ! -x "$CAIRN" ]; then
	echo "cluster: $CAIRN not found; run 'make build' first (or set CAIRN)" >&2
	exit 1
fi

peers=""
for i in 1 2 3; do
	peers="$peers${peers:+,}127.0.0.1:$((ROUTE_PORT + i - 1))"
done

pids=""
stop() {
	trap - INT TERM
	echo
	echo "cluster: stopping the nodes"
	# shellcheck disable=SC2086 # word splitting of the pid list is meant
	[ -n "$pids" ] && kill $pids 2>/dev/null || true
	wait
	echo "cluster: stopped"
	exit "${1:-0}"
}
trap 'stop 0' INT TERM

for i in 1 2 3; do
	dir="$CLUSTER_DIR/n$i"
	mkdir -p "$dir"
	chmod 700 "$dir"
	# shellcheck disable=SC2086 # CAIRN_FLAGS is a list of flags
	"$CAIRN" serve --data-dir "$dir" \
		--kv-listen "127.0.0.1:$((KV_PORT + i - 1))" --s3-listen "127.0.0.1:$((S3_PORT + i - 1))" \
		--cluster-name "$CLUSTER_NAME" --node-name "n$i" \
		--cluster-listen "127.0.0.1:$((ROUTE_PORT + i - 1))" --cluster-peers "$peers" \
		--cluster-partitions "$CLUSTER_PARTITIONS" $CAIRN_FLAGS >"$CLUSTER_DIR/n$i.log" 2>&1 &
	pids="$pids $!"
done

# Each node prints its data directory once it serves.
for i in 1 2 3; do
	n=0
	until grep -q '^cairn: data directory ' "$CLUSTER_DIR/n$i.log" 2>/dev/null; do
		n=$((n + 1))
		if [ "$n" -gt 300 ]; then
			echo "cluster: node n$i did not start within 30s; its log:" >&2
			cat "$CLUSTER_DIR/n$i.log" >&2
			stop 1
		fi
		sleep 0.1
	done
done

echo "cluster: 3 nodes of cluster \"$CLUSTER_NAME\" running (logs in $CLUSTER_DIR/nN.log):"
for i in 1 2 3; do
	echo "  n$i  key-value http://127.0.0.1:$((KV_PORT + i - 1))  S3 http://127.0.0.1:$((S3_PORT + i - 1))  routes 127.0.0.1:$((ROUTE_PORT + i - 1))"
done
echo "cluster: status: $CAIRN cluster status --url http://127.0.0.1:$KV_PORT"
echo "cluster: Ctrl-C stops them"
wait
echo "cluster: every node exited; logs in $CLUSTER_DIR" >&2
exit 1
