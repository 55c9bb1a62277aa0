package llamacpp

/*
extern const char *LLAMA_COMMIT;
*/
import "C"

// BuildCommit is the llama.cpp commit compiled into this binary (the build-info the vendored
// llama.cpp links, LLAMA_COMMIT), read from the linked code rather than a constant of ours.
func BuildCommit() string { return C.GoString(C.LLAMA_COMMIT) }
