// Package k8s holds framesweep's Kubernetes manifests: secret.yaml (the store URL and credentials),
// sweep-job.yaml (an Indexed Job, one shard per completion index) and merge-job.yaml (merge, then
// audit). Its test parses them into the k8s.io/api types and checks the shard mapping; they have not
// run on a cluster (docs/scale-out.md). The k8s.io modules are imported by the test only; this directory is a
// module of its own (go.mod here, `cd deploy/k8s && go test ./...`, which `make test` runs), so they stay
// out of the framesweep module's go.mod and binary.
package k8s
