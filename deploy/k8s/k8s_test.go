package k8s

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/framesweep/framesweep/internal/shard"
)

// load parses a manifest strictly (an unknown or misspelt field is an error) into v.
func load(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expand resolves $(VAR) in a command argument as the kubelet does (an unknown variable stays as
// written, which the checks below then catch).
func expand(s string, env map[string]string) string {
	return varRef.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := env[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// containerEnv is the environment a container of the manifests gets in the pod of completion index
// idx: its env (values, the secret's keys, the completion-index annotation) and envFrom the secret.
func containerEnv(t *testing.T, c corev1.Container, sec *corev1.Secret, idx int) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, f := range c.EnvFrom {
		if f.SecretRef == nil || f.SecretRef.Name != sec.Name {
			t.Fatalf("%s: envFrom %+v is not the secret %s", c.Name, f, sec.Name)
		}
		for k, v := range sec.StringData {
			env[k] = v
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			v, ok := sec.StringData[ref.Key]
			if ref.Name != sec.Name || !ok {
				t.Fatalf("%s: env %s reads %s/%s, which secret.yaml does not hold", c.Name, e.Name, ref.Name, ref.Key)
			}
			env[e.Name] = v
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.annotations['batch.kubernetes.io/job-completion-index']":
			env[e.Name] = strconv.Itoa(idx)
		default:
			t.Fatalf("%s: env %s from %+v", c.Name, e.Name, e.ValueFrom)
		}
	}
	return env
}

// TestManifests: the manifests parse strictly into the k8s.io/api types; the sweep is an Indexed Job
// whose pod i runs `framesweep sweep --shard env` as shard i/completions (internal/shard.FromEnv on the
// pod's environment, as the binary resolves it) into its own RUN; every shard's RUN is what the merge
// Job merges, exactly; the merged RUN is what its container audits; store URL and credentials come
// from the Secret.
func TestManifests(t *testing.T) {
	var sec corev1.Secret
	load(t, "secret.yaml", &sec)
	if sec.Kind != "Secret" || sec.Name == "" || sec.StringData["FRAMESWEEP_STORE"] == "" || !strings.Contains(sec.StringData["FRAMESWEEP_STORE"], "://") {
		t.Fatalf("secret.yaml: %+v", sec)
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "FRAMESWEEP_URL_QUERY"} {
		if _, ok := sec.StringData[k]; !ok {
			t.Errorf("secret.yaml has no %s", k)
		}
	}
	// A query the store needs (an S3-protocol server's endpoint) goes after each RUN's path.
	sec.StringData["FRAMESWEEP_URL_QUERY"] = "?endpoint=http://minio:9000&use_path_style=true"

	var sweep batchv1.Job
	load(t, "sweep-job.yaml", &sweep)
	if sweep.Kind != "Job" || sweep.APIVersion != "batch/v1" {
		t.Fatalf("sweep-job.yaml is a %s %s", sweep.APIVersion, sweep.Kind)
	}
	sp := sweep.Spec
	if sp.CompletionMode == nil || *sp.CompletionMode != batchv1.IndexedCompletion || sp.Completions == nil || *sp.Completions < 2 {
		t.Fatalf("sweep-job.yaml: want an Indexed Job with completions ≥ 2: %+v", sp)
	}
	n := int(*sp.Completions)
	pod := sp.Template.Spec
	if len(pod.Containers) != 1 || pod.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Fatalf("sweep pod: %d containers, restart %s", len(pod.Containers), pod.RestartPolicy)
	}
	c := pod.Containers[0]
	var runs []string
	for i := range n {
		env := containerEnv(t, c, &sec, i)
		got, from, err := shard.FromEnv(func(k string) string { return env[k] })
		if err != nil || got != (shard.Shard{I: i, N: n}) {
			t.Fatalf("completion index %d: --shard env gives %v (%s) %v, want %d/%d", i, got, from, err, i, n)
		}
		args := make([]string, len(c.Args))
		for j, a := range c.Args {
			args[j] = expand(a, env)
			if strings.Contains(args[j], "$(") {
				t.Fatalf("index %d: argument %q names a variable the pod does not have", i, a)
			}
		}
		if c.Command[0] != "framesweep" || args[0] != "sweep" || !slices.Contains(args, "--resume") {
			t.Fatalf("index %d: %v %v", i, c.Command, args)
		}
		k := slices.Index(args, "--shard")
		o := slices.Index(args, "--out")
		if k < 0 || args[k+1] != "env" || o < 0 {
			t.Fatalf("index %d: args %v: want --shard env and --out", i, args)
		}
		if want := fmt.Sprintf("%s/shard-%d%s", sec.StringData["FRAMESWEEP_STORE"], i, sec.StringData["FRAMESWEEP_URL_QUERY"]); args[o+1] != want {
			t.Fatalf("index %d writes %q, want %q", i, args[o+1], want)
		}
		if slices.Contains(runs, args[o+1]) {
			t.Fatalf("two indexes write %s", args[o+1])
		}
		runs = append(runs, args[o+1])
	}
	// The pod of an index the Job does not have (an edited completions) would refuse to start.
	env := containerEnv(t, c, &sec, n)
	if _, _, err := shard.FromEnv(func(k string) string { return env[k] }); err == nil {
		t.Fatalf("index %d of %d accepted", n, n)
	}

	var merge batchv1.Job
	load(t, "merge-job.yaml", &merge)
	mp := merge.Spec.Template.Spec
	if merge.Kind != "Job" || merge.Spec.CompletionMode != nil && *merge.Spec.CompletionMode == batchv1.IndexedCompletion || len(mp.InitContainers) != 1 || len(mp.Containers) != 1 {
		t.Fatalf("merge-job.yaml: %+v", merge.Spec)
	}
	mc := mp.InitContainers[0]
	menv := containerEnv(t, mc, &sec, 0)
	margs := make([]string, len(mc.Args))
	for j, a := range mc.Args {
		margs[j] = expand(a, menv)
	}
	o := slices.Index(margs, "--out")
	if margs[0] != "merge" || o < 0 || o != len(margs)-2 {
		t.Fatalf("merge args %v", margs)
	}
	inputs, out := margs[1:o], margs[o+1]
	if !slices.Equal(inputs, runs) {
		t.Fatalf("the merge joins %v; the sweep's %d indexes write %v", inputs, n, runs)
	}
	if slices.Contains(runs, out) || !strings.HasPrefix(out, sec.StringData["FRAMESWEEP_STORE"]+"/") {
		t.Fatalf("merge --out %s", out)
	}
	ac := mp.Containers[0]
	aenv := containerEnv(t, ac, &sec, 0)
	if len(ac.Args) < 2 || ac.Args[0] != "audit" || expand(ac.Args[1], aenv) != out {
		t.Fatalf("audit container %v: want audit %s", ac.Args, out)
	}
}
