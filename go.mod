module github.com/adaspdc/adaspdc

go 1.26.0

require (
	github.com/klauspost/cpuid/v2 v2.4.2
	golang.org/x/sync v0.24.0
	gonum.org/v1/gonum v0.17.0
)

require golang.org/x/sys v0.41.0 // indirect
