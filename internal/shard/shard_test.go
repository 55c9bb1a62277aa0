package shard

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	pad := strings.Repeat("0", 48)
	for _, c := range []struct {
		digest  string
		n, want int
	}{
		{"8000000000000000" + pad, 2, 1},
		{"7fffffffffffffff" + pad, 2, 0},
		{"5555555555555556" + pad, 3, 1}, // 0x5555555555555556·3 = 2⁶⁴ + 2: the multiply-high is 1
		{"5555555555555555" + pad, 3, 0},
		{"ffffffffffffffff" + pad, 7, 6},
		{"0000000000000000" + pad, 7, 0},
		{"not hex", 4, 0},
		{"ab" + pad, 1, 0},
	} {
		if got := Of(c.digest, c.n); got != c.want {
			t.Errorf("Of(%.16s…, %d) = %d, want %d", c.digest, c.n, got, c.want)
		}
	}
	// Every shard of N owns a near-equal share of random digests, and exactly one shard owns each.
	const n, videos = 5, 5000
	count := make([]int, n)
	for v := range videos {
		s := sha256.Sum256(fmt.Appendf(nil, "video %d", v))
		d := hex.EncodeToString(s[:])
		owners := 0
		for i := range n {
			if (Shard{I: i, N: n}).Owns(d) {
				owners++
				count[i]++
			}
		}
		if owners != 1 {
			t.Fatalf("%s owned by %d shards", d, owners)
		}
	}
	for i, c := range count {
		if c < videos/n*8/10 || c > videos/n*12/10 {
			t.Errorf("shard %d/%d owns %d of %d videos", i, n, c, videos)
		}
	}
}

func TestParse(t *testing.T) {
	if s, err := Parse("2/3"); err != nil || s != (Shard{2, 3}) || s.String() != "2/3" {
		t.Fatalf("2/3: %v %v", s, err)
	}
	for _, bad := range []string{"3/3", "-1/3", "1/0", "1", "a/b", "1/3/4", ""} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	set, err := ParseSet("2,0/3")
	if err != nil || set.Complete() || set.String() != "0,2/3" {
		t.Fatalf("set: %+v %v", set, err)
	}
	if set, err := ParseSet("1,0,2/3"); err != nil || !set.Complete() || set.String() != "" {
		t.Fatalf("complete set: %+v %v", set, err)
	}
	if set, err := ParseSet(""); err != nil || !set.Complete() {
		t.Fatalf("empty set: %+v %v", set, err)
	}
	for _, bad := range []string{"0,0/2", "2/2", "x/2", "0/"} {
		if _, err := ParseSet(bad); err == nil {
			t.Errorf("set %q accepted", bad)
		}
	}
}

func TestFromEnv(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want Shard
		err  string
	}{
		{map[string]string{EnvSlurmID: "2", EnvSlurmCount: "3", EnvSlurmMin: "0", EnvSlurmMax: "2"}, Shard{2, 3}, ""},
		{map[string]string{EnvSlurmID: "5", EnvSlurmCount: "4", EnvSlurmMin: "4", EnvSlurmMax: "7", EnvSlurmStep: "1"}, Shard{1, 4}, ""},
		{map[string]string{EnvSlurmID: "4", EnvSlurmCount: "3", EnvSlurmMin: "0", EnvSlurmMax: "4", EnvSlurmStep: "2"}, Shard{}, "step 2"},
		{map[string]string{EnvSlurmID: "3", EnvSlurmCount: "3", EnvSlurmMin: "0", EnvSlurmMax: "7"}, Shard{}, "contiguous"}, // --array=0,3,7
		{map[string]string{EnvSlurmID: "1"}, Shard{}, EnvSlurmCount},
		{map[string]string{EnvK8sIndex: "0", EnvCount: "3"}, Shard{0, 3}, ""},
		{map[string]string{EnvK8sIndex: "3", EnvCount: "3"}, Shard{}, "not below"},
		{map[string]string{EnvK8sIndex: "1"}, Shard{}, EnvCount},
		{map[string]string{EnvK8sIndex: "x", EnvCount: "3"}, Shard{}, "not an index"},
		{map[string]string{EnvK8sIndex: "1", EnvCount: "3", EnvSlurmID: "1"}, Shard{}, "both"},
		{map[string]string{}, Shard{}, "neither"},
	} {
		got, from, err := FromEnv(func(k string) string { return c.env[k] })
		if c.err == "" && (err != nil || got != c.want || from == "") || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%v: %v (%s) %v, want %v / %q", c.env, got, from, err, c.want, c.err)
		}
	}
}
