//go:build cgo && !customenv

package opencv

// The only cgo flags of this package. OpenCV's pkg-config file (opencv4) names all of its modules, so
// the include directory and the two libraries are given by hand (Debian 12's libopencv-dev layout);
// libjpeg-turbo has its own .pc file. Build with -tags customenv to supply CGO_CPPFLAGS and
// CGO_LDFLAGS yourself for another layout.

// #cgo CPPFLAGS: -I/usr/include/opencv4
// #cgo LDFLAGS: -lopencv_imgproc -lopencv_core
// #cgo pkg-config: libjpeg
import "C"
