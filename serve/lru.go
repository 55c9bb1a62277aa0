package serve

import (
	"container/list"
	"sync"
)

// lru is a least-recently-used map bounded by the total cost of its values (bytes for objects,
// 1 per entry for video descriptions). A value costlier than the whole capacity is not kept.
type lru[K comparable, V any] struct {
	mu    sync.Mutex
	cap   int64
	size  int64
	ll    *list.List // front = most recent
	items map[K]*list.Element
	cost  func(V) int64
	// evicted, when set, is told of each value dropped to make room (after the lock is released).
	evicted func(V)
}

type lruItem[K comparable, V any] struct {
	k    K
	v    V
	cost int64
}

func newLRU[K comparable, V any](capacity int64, cost func(V) int64) *lru[K, V] {
	return &lru[K, V]{cap: capacity, ll: list.New(), items: map[K]*list.Element{}, cost: cost}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*lruItem[K, V]).v, true
	}
	var zero V
	return zero, false
}

func (c *lru[K, V]) put(k K, v V) {
	n := c.cost(v)
	var out []V
	c.mu.Lock()
	if e, ok := c.items[k]; ok {
		c.remove(e)
	}
	if n <= c.cap {
		c.items[k] = c.ll.PushFront(&lruItem[K, V]{k: k, v: v, cost: n})
		c.size += n
		for c.size > c.cap {
			back := c.ll.Back()
			c.remove(back)
			out = append(out, back.Value.(*lruItem[K, V]).v)
		}
	}
	c.mu.Unlock()
	if c.evicted != nil {
		for _, v := range out {
			c.evicted(v)
		}
	}
}

// has reports whether k is held, without making it more recent.
func (c *lru[K, V]) has(k K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.items[k]
	return ok
}

func (c *lru[K, V]) delete(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.remove(e)
	}
}

func (c *lru[K, V]) remove(e *list.Element) {
	it := e.Value.(*lruItem[K, V])
	c.ll.Remove(e)
	delete(c.items, it.k)
	c.size -= it.cost
}

// usage is the total cost held and the number of entries.
func (c *lru[K, V]) usage() (int64, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size, len(c.items)
}
