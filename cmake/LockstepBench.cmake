# Benchmarks (Google Benchmark).
find_package(benchmark REQUIRED)
