package sweep

import (
	"context"

	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
)

// group is one video with the items on it: the unit of work (decode-once holds per group) and of
// sharding.
type group struct {
	path  string
	sha   string // the content digest, hashed once here ("" when the file cannot be read)
	err   error  // why it cannot be read (its visual pairs get error records)
	items []*items.Item
}

// pendingItems are the group's items with no record of config c yet.
func (g *group) pendingItems(s *session, c *grid.Config) []*items.Item {
	var out []*items.Item
	for _, it := range g.items {
		if !s.skip(record.Pair{Item: it.ItemID, Config: c.ID}) {
			out = append(out, it)
		}
	}
	return out
}

// groups selects the items (limit), groups them by video content and keeps this shard's videos.
// Every video is hashed here, once: the digest is the shard key, the records' video_sha256, and it
// goes to the engine with the path (pipeline.VideoRef) so the video is not hashed again.
func (s *session) groups(ctx context.Context) ([]*group, error) {
	list := s.o.Items.Items
	if s.o.Limit > 0 && s.o.Limit < len(list) {
		list = list[:s.o.Limit]
	}
	byPath := map[string]*group{}
	var order []*group
	for i := range list {
		it := &list[i]
		g := byPath[it.Video]
		if g == nil {
			g = &group{path: it.Video}
			byPath[it.Video] = g
			order = append(order, g)
		}
		g.items = append(g.items, it)
	}
	// Two paths to one content are one group, so the video is decoded once.
	bySHA := map[string]*group{}
	var out []*group
	for _, g := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !s.o.Shard.Owns(g.hash()) {
			s.sum.VideosOther++
			continue
		}
		if g.sha != "" {
			if prev := bySHA[g.sha]; prev != nil {
				prev.items = append(prev.items, g.items...)
				continue
			}
			bySHA[g.sha] = g
		}
		out = append(out, g)
	}
	s.count(out)
	return out, nil
}

// hash digests the group's video and returns its shard key (pipeline.ShardKey, which extract uses
// too): the digest, or for a file that cannot be read the sha256 of its path, so exactly one shard
// reports it; why it cannot be read is the group's error.
func (g *group) hash() string {
	var key string
	g.sha, key, g.err = pipeline.ShardKey(g.path)
	return key
}

// count sets the summary's items, pairs, pairs already recorded and failed pairs asked again.
func (s *session) count(groups []*group) {
	for _, g := range groups {
		s.sum.Items += len(g.items)
		for _, it := range g.items {
			for _, c := range s.o.Grid.Configs {
				s.sum.Pairs++
				p := record.Pair{Item: it.ItemID, Config: c.ID}
				switch {
				case s.skip(p):
					s.sum.PairsRecorded++
				case s.w.State(p) != runs.Unrecorded:
					s.sum.PairsRetried++
				}
			}
		}
	}
	s.sum.Videos = len(groups)
}

// prepare readies the groups' work and returns what Progress counts: pending pairs, or for an
// online cascade the items still escalating (every item's state is made here, before the videos run
// in parallel: the map is then only read concurrently).
func (s *session) prepare(groups []*group) int {
	todo := 0
	for _, g := range groups {
		if s.ladder != nil {
			todo += s.ladder.addItems(g.items)
			continue
		}
		for i := range s.o.Grid.Configs {
			todo += len(g.pendingItems(s, &s.o.Grid.Configs[i]))
		}
	}
	return todo
}
