//go:build e2e_imports

// Package cluster records, for go mod tidy, that test/cluster/build compiles the upstream e2e
// tests (go test -c k8s.io/kubernetes/test/e2e); it is never built.
package cluster

import _ "k8s.io/kubernetes/test/e2e"
