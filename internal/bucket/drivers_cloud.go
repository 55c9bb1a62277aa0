//go:build !nocloud

package bucket

// The object-store drivers. They link about 650 packages (GCS alone about 480, 159 of them grpc) and
// half of the binary's size; `-tags nocloud` leaves them out (drivers_nocloud.go).
import (
	_ "gocloud.dev/blob/azureblob" // azblob:// (Azure Blob Storage)
	_ "gocloud.dev/blob/gcsblob"   // gs:// (Google Cloud Storage)
	_ "gocloud.dev/blob/s3blob"    // s3:// (AWS S3 and S3-protocol servers, through the AWS SDK v2)
)

// CloudDrivers reports whether this binary has the object-store drivers (s3, gs, azblob).
const CloudDrivers = true
