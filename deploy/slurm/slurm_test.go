package slurm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// cluster is a single-node Slurm this test runs: munged, slurmctld and slurmd as its own children,
// with state, spool, logs and the munge socket under a temporary directory and private ports.
type cluster struct {
	dir, conf string
	env       []string
	procs     []*exec.Cmd
}

func (c *cluster) start(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = c.env
	log, err := os.Create(filepath.Join(c.dir, "log", filepath.Base(name)+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c.procs = append(c.procs, cmd)
}

// stop ends the daemons this test started (TERM, then KILL after 5 s), newest first.
func (c *cluster) stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		p.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			p.Process.Kill()
			<-done
		}
	}
}

// logs is every log of the cluster, for a failure message.
func (c *cluster) logs() string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(c.dir, "log", "*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		fmt.Fprintf(&b, "==> %s <==\n%s\n", f, data)
	}
	return b.String()
}

func (c *cluster) run(args ...string) (string, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	var bins []string
	for _, b := range []string{"munged", "slurmctld", "slurmd", "sbatch", "sinfo", "scontrol", "scancel"} {
		bins = append(bins, testenv.Need(t, b))
	}
	if os.Geteuid() != 0 {
		testenv.Missing(t, "a single-node Slurm with SlurmUser=root needs root")
	}
	dir := t.TempDir()
	for _, d := range []string{"state", "spool", "log", "munge"} {
		os.MkdirAll(filepath.Join(dir, d), 0o700)
	}
	key := make([]byte, 1024)
	rand.Read(key)
	if err := os.WriteFile(filepath.Join(dir, "munge", "munge.key"), key, 0o400); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "munge", "munge.sock")
	conf := filepath.Join(dir, "slurm.conf")
	text := fmt.Sprintf(`ClusterName=framesweep-test
SlurmctldHost=localhost
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%[3]s
CredType=cred/munge
StateSaveLocation=%[4]s/state
SlurmdSpoolDir=%[4]s/spool
SlurmctldPidFile=%[4]s/slurmctld.pid
SlurmdPidFile=%[4]s/slurmd.pid
SlurmctldLogFile=%[4]s/log/slurmctld.log
SlurmdLogFile=%[4]s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
NodeName=fsnode NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=fs Nodes=fsnode Default=YES MaxTime=INFINITE State=UP
`, freePort(t), freePort(t), sock, dir)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &cluster{dir: dir, conf: conf, env: append(os.Environ(), "SLURM_CONF="+conf)}
	t.Cleanup(c.stop)
	c.start(t, bins[0], "-F", "--force", "--key-file="+filepath.Join(dir, "munge", "munge.key"), "--socket="+sock,
		"--pid-file="+filepath.Join(dir, "munge", "munged.pid"), "--log-file="+filepath.Join(dir, "log", "munged.log"),
		"--seed-file="+filepath.Join(dir, "munge", "munged.seed"))
	waitFor(t, c, 10*time.Second, "the munge socket", func() bool { _, err := os.Stat(sock); return err == nil })
	c.start(t, bins[1], "-D", "-c", "-f", conf)
	c.start(t, bins[2], "-D", "-N", "fsnode", "-f", conf)
	waitFor(t, c, 30*time.Second, "the node to be idle", func() bool {
		out, err := c.run("sinfo", "-h", "-N", "-o", "%t")
		return err == nil && out == "idle"
	})
	return c
}

func waitFor(t *testing.T, c *cluster, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s\n%s", d, what, c.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// jobState is a job's JobState from scontrol (every task's, for an array).
func (c *cluster) jobState(id string) []string {
	out, err := c.run("scontrol", "-o", "show", "job", id)
	if err != nil {
		return nil
	}
	var states []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		for _, f := range strings.Fields(sc.Text()) {
			if s, ok := strings.CutPrefix(f, "JobState="); ok {
				states = append(states, s)
			}
		}
	}
	return states
}

type record struct {
	ItemID      string             `json:"item_id"`
	Config      string             `json:"config"`
	Status      string             `json:"status"`
	Prediction  string             `json:"prediction"`
	Probs       map[string]float64 `json:"probs"`
	InputSHA256 string             `json:"input_sha256"`
}

func readRecords(t *testing.T, path string) map[string]record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]record{}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var r record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%s: %q: %v", path, l, err)
		}
		k := r.ItemID + "|" + r.Config
		if _, dup := out[k]; dup {
			t.Fatalf("%s: two records of %s", path, k)
		}
		out[k] = r
	}
	return out
}

// TestSlurmJobArray: submit.sh on a real single-node Slurm (munged, slurmctld, slurmd started here):
// a 3-task job array sweeps one shard per task (--shard env), the dependent job merges the shards and
// audits the merged RUN; the merged records equal a single unsharded sweep's, pair for pair.
func TestSlurmJobArray(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a Slurm cluster")
	}
	bin := testenv.Binary(t)
	c := startCluster(t)
	root, _ := filepath.Abs("../..")
	work := t.TempDir()
	tm := filepath.Join(work, "model")
	out, err := exec.Command(bin, "testmodel", "--out", tm).Output()
	if err != nil {
		t.Fatal(err)
	}
	var model struct{ Spec string }
	if err := json.Unmarshal(out, &model); err != nil || model.Spec == "" {
		t.Fatalf("testmodel --out: %v: %s", err, out)
	}
	spec := model.Spec + ",threads=1"
	grid, items := filepath.Join(root, "examples", "sweep-grid.yaml"), filepath.Join(root, "examples", "items.jsonl")
	runs, results, logs := filepath.Join(work, "runs"), filepath.Join(work, "results"), filepath.Join(work, "logs")
	script, _ := filepath.Abs("submit.sh")
	sub := exec.Command(script)
	sub.Env = append(c.env, "FRAMESWEEP="+bin, "FRAMESWEEP_GRID="+grid, "FRAMESWEEP_ITEMS="+items, "FRAMESWEEP_RUNTIME="+spec,
		"FRAMESWEEP_RUNS="+runs, "FRAMESWEEP_SHARDS=3", "FRAMESWEEP_RESULTS="+results, "FRAMESWEEP_LOGS="+logs)
	sub.Dir = work
	var serr bytes.Buffer
	sub.Stderr = &serr
	subOut, err := sub.Output()
	if err != nil {
		t.Fatalf("submit.sh: %v\n%s", err, serr.String())
	}
	var ids struct {
		Array string `json:"array_job"`
		Merge string `json:"merge_job"`
	}
	if err := json.Unmarshal(subOut, &ids); err != nil || ids.Array == "" || ids.Merge == "" {
		t.Fatalf("submit.sh printed %q: %v", subOut, err)
	}
	t.Cleanup(func() { c.run("scancel", ids.Array, ids.Merge) })

	// A single sweep of the same work, meanwhile, for the comparison.
	single := filepath.Join(work, "single")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bin, "sweep", "--grid", grid, "--items", items, "--runtime", spec, "--out", single).CombinedOutput(); err != nil {
		t.Fatalf("single sweep: %v\n%s", err, out)
	}

	jobLogs := func() string {
		var b strings.Builder
		files, _ := filepath.Glob(filepath.Join(logs, "*"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			fmt.Fprintf(&b, "==> %s <==\n%s\n", f, data)
		}
		return b.String() + c.logs()
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		st := c.jobState(ids.Merge)
		if len(st) == 1 && st[0] == "COMPLETED" {
			break
		}
		if len(st) == 1 && (st[0] == "FAILED" || st[0] == "CANCELLED" || st[0] == "TIMEOUT" || st[0] == "NODE_FAIL") || time.Now().After(deadline) {
			t.Fatalf("merge job %s: %v; array %s: %v\n%s", ids.Merge, st, ids.Array, c.jobState(ids.Array), jobLogs())
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, s := range c.jobState(ids.Array) {
		if s != "COMPLETED" {
			t.Fatalf("array tasks %v", c.jobState(ids.Array))
		}
	}
	if n := len(c.jobState(ids.Array)); n != 3 {
		t.Fatalf("%d array tasks ran, want 3", n)
	}

	// Each shard's RUN says which shard it is; the merged RUN equals the single sweep.
	total := 0
	for i := range 3 {
		var ri struct {
			Shard string `json:"shard"`
		}
		b, err := os.ReadFile(filepath.Join(runs, fmt.Sprintf("shard-%d", i), "run.json"))
		if err != nil || json.Unmarshal(b, &ri) != nil || ri.Shard != fmt.Sprintf("%d/3", i) {
			t.Fatalf("shard %d run.json: %s %v", i, b, err)
		}
		if recs, err := os.ReadFile(filepath.Join(runs, fmt.Sprintf("shard-%d", i), "records.jsonl")); err == nil {
			total += bytes.Count(recs, []byte("\n"))
		}
	}
	got := readRecords(t, filepath.Join(runs, "merged", "records.jsonl"))
	want := readRecords(t, filepath.Join(single, "records.jsonl"))
	if len(got) != len(want) || total != len(want) {
		t.Fatalf("merged %d records (shards %d), single run %d", len(got), total, len(want))
	}
	for k, w := range want {
		g := got[k]
		if g.Status != w.Status || g.Prediction != w.Prediction || g.InputSHA256 != w.InputSHA256 || len(g.Probs) != len(w.Probs) {
			t.Fatalf("%s: merged %+v, single %+v", k, g, w)
		}
		for l, p := range w.Probs {
			if g.Probs[l] != p {
				t.Fatalf("%s: P(%s) %v vs %v", k, l, g.Probs[l], p)
			}
		}
	}
	var audit struct {
		Items int `json:"items"`
	}
	if b, err := os.ReadFile(filepath.Join(results, "audit.json")); err != nil || json.Unmarshal(b, &audit) != nil || audit.Items != 12 {
		t.Fatalf("audit.json of the merge job: %+v %v", audit, err)
	}
	if st, err := os.Stat(filepath.Join(results, "report.html")); err != nil || st.Size() == 0 {
		t.Fatalf("report.html: %v", err)
	}
}
