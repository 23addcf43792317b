#!/bin/sh
# Why the zeros flood cannot reach 0.8x of `head | cat` here: the same reader loop goes twice as
# fast when it does MORE work per read. Compiles a 20-line C reader (needs gcc) and runs
#   head -c 512M /dev/zero | reader <mode>
# for each mode, 3 times, printing MiB/s and the average read size. Usage: sh bench/pipe-bound.sh
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/reader.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "read";
  int null = open("/dev/null", O_WRONLY);
  static char buf[131072];
  size_t total = 0; long reads = 0; ssize_t n; double t0 = now();
  while ((n = read(0, buf, sizeof buf)) > 0) {
    total += n; reads++;
    if (!strcmp(mode, "read+write")) write(null, buf, n);        /* what cat does */
    else if (!strcmp(mode, "read+yield")) sched_yield();
  }
  double t = now() - t0;
  printf("%-11s %5.0f MiB/s  %6ld reads of %5.0f bytes on average\n", mode, total / 1048576.0 / t, reads, (double)total / reads);
  return 0;
}
C
gcc -O2 -o "$dir/reader" "$dir/reader.c"
for i in 1 2 3; do
  start=$(date +%s%N); head -c 536870912 /dev/zero | cat > /dev/null; end=$(date +%s%N)
  echo "head | cat   $(( 512 * 1000000000 / (end - start) )) MiB/s (whole pipeline, both processes started)"
  for mode in read read+write read+yield; do head -c 536870912 /dev/zero | "$dir/reader" "$mode"; done
done
