package llamacpp

/*
// The ollama wrapper has no way to free a llama_context; declare the one C entry point we need
// (it is compiled into the binary by the ollama llama package we import).
struct llama_context;
extern void llama_free(struct llama_context * ctx);

static void native_llama_free(void *ctx) { llama_free((struct llama_context *)ctx); }
*/
import "C"

import (
	"unsafe"

	"github.com/ollama/ollama/llama"
)

// freeContext releases a llama_context. llama.Context keeps its C pointer in its first field; the
// ollama version is pinned (v0.17.4) and TestLeakCheck exercises this path.
func freeContext(c *llama.Context) {
	p := *(*unsafe.Pointer)(unsafe.Pointer(c))
	if p != nil {
		C.native_llama_free(p)
		*(*unsafe.Pointer)(unsafe.Pointer(c)) = nil
	}
}
