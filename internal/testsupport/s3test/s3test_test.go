package s3test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/framesweep/framesweep/internal/bucket"
)

// TestServesWhatItStored: GETs of objects while other keys are written return exactly the stored
// bytes (the bbolt backend this server used before handed on pages of its mmap after the read
// transaction, and concurrent PUTs reused or unmapped them); Corrupt flips one byte of the named
// object's replies, as many times as asked, and nothing else.
func TestServesWhatItStored(t *testing.T) {
	ctx := context.Background()
	s := Start(t)
	b, err := bucket.Open(ctx, s.URL("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Small objects (a records chunk, a lease): in bbolt they live in leaf pages beside their
	// neighbours' keys, and a PUT of a neighbour copies the leaf and frees the page a GET still sends.
	body := func(i int) []byte {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		out := make([]byte, 600+i%1500)
		for k := range out {
			out[k] = 'a' + byte(r.IntN(26))
		}
		return out
	}
	const stored = 40
	for i := range stored {
		if err := b.Write(ctx, fmt.Sprintf("k/%03d", i), bytes.NewReader(body(i)), "", true); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	done := make(chan struct{})
	for w := range 3 { // writers: new keys among the stored ones
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 400 {
				k := 1000 + w*1000 + i
				if err := b.Write(ctx, fmt.Sprintf("k/%03d-%d", i%stored, k), bytes.NewReader(body(k)), "", true); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var rg sync.WaitGroup
	for r := range 4 { // readers: the stored keys, until the writers are done
		rg.Add(1)
		go func() {
			defer rg.Done()
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				i := (r*7 + n) % stored
				got, err := b.ReadAll(ctx, fmt.Sprintf("k/%03d", i))
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(got, body(i)) {
					errs <- fmt.Errorf("k/%03d: the %d bytes read differ from the %d stored", i, len(got), len(body(i)))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	small := []byte("0123456789\n")
	if err := b.Write(ctx, "c", bytes.NewReader(small), "", true); err != nil {
		t.Fatal(err)
	}
	s.Corrupt("t/c", 1)
	want := append([]byte(nil), small...)
	want[len(want)/2] ^= 0x01
	for i, w := range [][]byte{want, small} {
		if got, err := b.ReadAll(ctx, "c"); err != nil || !bytes.Equal(got, w) {
			t.Errorf("read %d of a key corrupted once: %q %v, want %q", i, got, err, w)
		}
	}
	if got, _ := b.ReadAll(ctx, "k/000"); !bytes.Equal(got, body(0)) {
		t.Error("Corrupt changed another key")
	}
}
