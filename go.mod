module github.com/cloudstic/cloudstic

go 1.26.8
