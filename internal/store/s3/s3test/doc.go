// Package s3test lists the S3 test servers from the variables their start
// scripts export: versitygw (scripts/s3-server.sh, S3_TEST_*), a single
// process in front of a directory, and a SeaweedFS cluster
// (scripts/seaweedfs-server.sh, SEAWEED_TEST_*): a master, three volume
// servers keeping every object on two of them, a filer and the S3 gateway.
// Every test that runs against S3 runs against each server, as a subtest
// named by the server, so that a difference between a single-node and a
// distributed store shows as a failure of one of them.
package s3test
