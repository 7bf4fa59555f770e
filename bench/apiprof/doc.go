// Package apiprof holds in-process Go benchmarks of the API's request path,
// for CPU profiles of where an authenticated request spends its time
// without the network or a load generator in the way:
//
//	go test ./bench/apiprof -run '^$' -bench . -benchmem
//	go test ./bench/apiprof -run '^$' -bench 'Handler/sqlite-get' -cpuprofile /tmp/cpu.out
//	go tool pprof -top -cum /tmp/cpu.out
//
// PostgreSQL cases run when TOCSIN_TEST_POSTGRES_URL names a server, as for
// the store's tests, e.g.
// TOCSIN_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable.
package apiprof
