// Package shard assigns videos to the machines of a scaled-out sweep or extract: a video belongs to
// shard Of(its content digest, N). sweep and pipeline both use it (pipeline must not import sweep),
// so `framesweep extract --shard i/N` and `framesweep sweep --shard i/N` put every video on the same
// machine.
package shard

import (
	"encoding/hex"
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"
)

// Shard is one machine's part: the videos whose content digest falls in shard I of N. The unit is a
// whole video (all its items and configs), so decode-once holds on every machine, and the assignment
// depends on the video's bytes only: stable across runs, paths and machines. The zero value (N = 0)
// and N = 1 own every video.
type Shard struct{ I, N int }

// Parse reads "i/N" with 0 ≤ i < N.
func Parse(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, e1 := strconv.Atoi(a)
	n, e2 := strconv.Atoi(b)
	if !ok || e1 != nil || e2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want i/N with 0 ≤ i < N", s)
	}
	return Shard{I: i, N: n}, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// Of is the shard a hex sha256 digest belongs to among n: its first 8 bytes as a big-endian integer,
// scaled to n by a multiply-high (no modulo bias worth speaking of for a uniform 64-bit hash).
func Of(digest string, n int) int {
	if n <= 1 {
		return 0
	}
	b, err := hex.DecodeString(digest)
	var x uint64
	if err == nil && len(b) >= 8 {
		for _, c := range b[:8] {
			x = x<<8 | uint64(c)
		}
	}
	hi, _ := bits.Mul64(x, uint64(n))
	return int(hi)
}

// Owns reports whether the video with this digest is this shard's (every video when N ≤ 1).
func (s Shard) Owns(digest string) bool { return s.N <= 1 || Of(digest, s.N) == s.I }

// Set is several shards of one N, as a merge of shard runs holds them: "0,2/3". A complete set (every
// i of N) owns every video.
type Set struct {
	I []int // sorted, distinct
	N int
}

// ParseSet reads "i/N" or "i,j,…/N"; "" is the whole (unsharded) set.
func ParseSet(s string) (Set, error) {
	if s == "" {
		return Set{N: 1, I: []int{0}}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(b)
	if !ok || err != nil || n < 1 {
		return Set{}, fmt.Errorf("shards %q: want i/N or i,j,…/N", s)
	}
	set := Set{N: n}
	seen := map[int]bool{}
	for _, f := range strings.Split(a, ",") {
		i, err := strconv.Atoi(f)
		if err != nil || i < 0 || i >= n || seen[i] {
			return Set{}, fmt.Errorf("shards %q: want distinct i with 0 ≤ i < %d", s, n)
		}
		seen[i] = true
		set.I = append(set.I, i)
	}
	sort.Ints(set.I)
	return set, nil
}

// Complete reports whether the set holds every shard of N.
func (s Set) Complete() bool { return len(s.I) == s.N }

// String is "i,j/N", or "" for a complete set (a RUN that is no shard).
func (s Set) String() string {
	if s.Complete() {
		return ""
	}
	parts := make([]string, len(s.I))
	for k, i := range s.I {
		parts[k] = strconv.Itoa(i)
	}
	return strings.Join(parts, ",") + "/" + strconv.Itoa(s.N)
}

// Environment variables FromEnv reads.
const (
	EnvSlurmID    = "SLURM_ARRAY_TASK_ID"
	EnvSlurmCount = "SLURM_ARRAY_TASK_COUNT"
	EnvSlurmMin   = "SLURM_ARRAY_TASK_MIN"
	EnvSlurmMax   = "SLURM_ARRAY_TASK_MAX"
	EnvSlurmStep  = "SLURM_ARRAY_TASK_STEP"
	EnvK8sIndex   = "JOB_COMPLETION_INDEX"
	EnvCount      = "FRAMESWEEP_SHARD_COUNT"
)

// FromEnv is the shard a scheduler gives this task (`--shard env`), and where it came from:
//
//   - a Slurm job array: i = SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN, N = SLURM_ARRAY_TASK_COUNT;
//     the array must be one contiguous range with step 1 (--array=0-7, --array=1-8, with or without a %
//     limit), so that every i of N runs exactly once;
//   - a Kubernetes Indexed Job: i = JOB_COMPLETION_INDEX, N = FRAMESWEEP_SHARD_COUNT (the Job's
//     completions; Kubernetes does not put the count in the environment).
//
// Neither, both, or values that do not make one i of N are errors naming the variables.
func FromEnv(getenv func(string) string) (Shard, string, error) {
	slurm, k8s := getenv(EnvSlurmID), getenv(EnvK8sIndex)
	switch {
	case slurm != "" && k8s != "":
		return Shard{}, "", fmt.Errorf("both %s and %s are set; give --shard i/N", EnvSlurmID, EnvK8sIndex)
	case slurm != "":
		num := func(name string) (int, error) {
			v := getenv(name)
			n, err := strconv.Atoi(v)
			if err != nil {
				return 0, fmt.Errorf("%s=%q is not a number (a Slurm job array sets it)", name, v)
			}
			return n, nil
		}
		id, err := num(EnvSlurmID)
		if err != nil {
			return Shard{}, "", err
		}
		count, err := num(EnvSlurmCount)
		if err != nil {
			return Shard{}, "", err
		}
		lo, err := num(EnvSlurmMin)
		if err != nil {
			return Shard{}, "", err
		}
		hi, err := num(EnvSlurmMax)
		if err != nil {
			return Shard{}, "", err
		}
		if st := getenv(EnvSlurmStep); st != "" && st != "1" {
			return Shard{}, "", fmt.Errorf("the job array has step %s; submit one contiguous range (--array=0-%d)", st, count-1)
		}
		if hi-lo+1 != count || id < lo || id > hi {
			return Shard{}, "", fmt.Errorf("job array %d-%d holds %d tasks and this is task %d: submit one contiguous range (--array=0-%d)", lo, hi, count, id, count-1)
		}
		return Shard{I: id - lo, N: count}, fmt.Sprintf("%s=%d of %d-%d", EnvSlurmID, id, lo, hi), nil
	case k8s != "":
		i, err := strconv.Atoi(k8s)
		c := getenv(EnvCount)
		n, err2 := strconv.Atoi(c)
		switch {
		case err != nil || i < 0:
			return Shard{}, "", fmt.Errorf("%s=%q is not an index", EnvK8sIndex, k8s)
		case err2 != nil || n < 1:
			return Shard{}, "", fmt.Errorf("%s=%s needs %s (the Job's completions), got %q", EnvK8sIndex, k8s, EnvCount, c)
		case i >= n:
			return Shard{}, "", fmt.Errorf("%s=%d is not below %s=%d", EnvK8sIndex, i, EnvCount, n)
		}
		return Shard{I: i, N: n}, fmt.Sprintf("%s=%d, %s=%d", EnvK8sIndex, i, EnvCount, n), nil
	}
	return Shard{}, "", fmt.Errorf("neither %s (a Slurm job array) nor %s (a Kubernetes Indexed Job) is set", EnvSlurmID, EnvK8sIndex)
}
