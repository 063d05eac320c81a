// Package cluster tests cloudstic against a distributed S3 store losing a
// node: a SeaweedFS cluster (scripts/seaweedfs-server.sh: a master, three
// volume servers keeping every object on two of them, a filer and the S3
// gateway) has one volume server killed with SIGKILL, by the pid the script
// exports, while the lock is contended and while a backup runs; the server
// is then restarted by running the script again. Each test starts a cluster
// of its own on ports of its own, so that the killed node does not disturb
// the other tests that share the cluster test.sh starts.
package cluster
