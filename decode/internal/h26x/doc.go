// Package h26x reads H.264 and HEVC bitstreams without decoding them, for decode's index scan and
// schedule: how a stream's packets are framed (avcC/hvcC, Annex-B), which pictures no other picture
// references (nal.go), and, for H.264 and HEVC, the reference structure from the slice headers and a
// model of FFmpeg's reference handling that says which reference pictures a set of wanted frames can do
// without (h264hdr.go, h264refs.go, h264sim.go; hevchdr.go, hevcrefs.go, hevcsim.go). It is pure Go,
// so its fuzz targets run without cgo;
// decode holds the FFmpeg side (packets, codec ids) and calls it.
//
// A packet is seen through a View: its first bytes and its whole size, so the index scan need not copy
// every payload out of FFmpeg; each function says when the view does not suffice (known false), and
// the caller then passes the whole packet.
package h26x
