//go:build cgo

// JPEG through libjpeg-turbo with the settings of OpenCV 4.6's imgcodecs JPEG codec (doc.go). libjpeg
// reports errors by calling error_exit, which must not return: it longjmps back here (plain C, so no
// C++ frame is skipped), and everything libjpeg allocated is released by jpeg_destroy_*.
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#include "opencv.h"

struct native_jpeg_err {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	char *err;
	int errn;
	int warned;
};

static void native_jpeg_msg(j_common_ptr c, struct native_jpeg_err *e) {
	char msg[JMSG_LENGTH_MAX];
	if (e->err == NULL || e->errn <= 0)
		return;
	(*c->err->format_message)(c, msg);
	strncpy(e->err, msg, (size_t)e->errn - 1);
	e->err[e->errn - 1] = '\0';
}

static void native_jpeg_error_exit(j_common_ptr c) {
	struct native_jpeg_err *e = (struct native_jpeg_err *)c->err;
	native_jpeg_msg(c, e);
	longjmp(e->jump, 1);
}

// Warnings (msg_level −1: corrupt data, premature end) are kept, the first one's text in err; trace
// messages are dropped. Nothing is printed.
static void native_jpeg_emit(j_common_ptr c, int level) {
	struct native_jpeg_err *e = (struct native_jpeg_err *)c->err;
	if (level < 0) {
		if (!e->warned)
			native_jpeg_msg(c, e);
		e->warned = 1;
	}
}

static void native_jpeg_err_init(struct native_jpeg_err *e, char *err, int errn) {
	memset(e, 0, sizeof *e);
	jpeg_std_error(&e->pub);
	e->pub.error_exit = native_jpeg_error_exit;
	e->pub.emit_message = native_jpeg_emit;
	e->err = err;
	e->errn = errn;
}

// The encoder's destination: a buffer of our own that doubles as it fills (jpeg_mem_dest would free
// and replace its buffer behind the caller's pointer, which an error exit could then free twice).
struct native_jpeg_dest {
	struct jpeg_destination_mgr pub;
	uint8_t *buf;
	size_t size;
};

static void native_jpeg_dest_init(j_compress_ptr c) {
	(void)c;
}

static boolean native_jpeg_dest_grow(j_compress_ptr c) {
	struct native_jpeg_dest *d = (struct native_jpeg_dest *)c->dest;
	size_t n = d->size * 2;
	uint8_t *b = realloc(d->buf, n);
	if (b == NULL)
		ERREXIT1(c, JERR_OUT_OF_MEMORY, 0);
	d->pub.next_output_byte = b + d->size;
	d->pub.free_in_buffer = n - d->size;
	d->buf = b;
	d->size = n;
	return TRUE;
}

static void native_jpeg_dest_term(j_compress_ptr c) {
	struct native_jpeg_dest *d = (struct native_jpeg_dest *)c->dest;
	d->size -= d->pub.free_in_buffer;
}

int native_cv_jpeg_encode(const uint8_t *rgb, int w, int h, int stride, int quality, uint8_t **out,
                          size_t *outlen, char *err, int errn) {
	struct jpeg_compress_struct c;
	struct native_jpeg_err e;
	struct native_jpeg_dest dest;
	*out = NULL;
	*outlen = 0;
	memset(&dest, 0, sizeof dest);
	dest.size = 1 << 16;
	if ((dest.buf = malloc(dest.size)) == NULL) {
		if (err != NULL && errn > 0)
			snprintf(err, (size_t)errn, "out of memory");
		return NATIVE_CV_ERR_NOMEM;
	}
	dest.pub.init_destination = native_jpeg_dest_init;
	dest.pub.empty_output_buffer = native_jpeg_dest_grow;
	dest.pub.term_destination = native_jpeg_dest_term;
	dest.pub.next_output_byte = dest.buf;
	dest.pub.free_in_buffer = dest.size;
	native_jpeg_err_init(&e, err, errn);
	c.err = &e.pub;
	if (setjmp(e.jump)) {
		jpeg_destroy_compress(&c);
		free(dest.buf);
		return NATIVE_CV_ERR;
	}
	jpeg_create_compress(&c);
	c.dest = &dest.pub;
	c.image_width = (JDIMENSION)w;
	c.image_height = (JDIMENSION)h;
	c.input_components = 3;
	c.in_color_space = JCS_RGB;
	// OpenCV's order: defaults, restart interval (0), quality limited to baseline tables; no
	// progressive, no optimised Huffman tables; its 4:2:0 sampling factor equals the defaults.
	jpeg_set_defaults(&c);
	c.restart_interval = 0;
	jpeg_set_quality(&c, quality, TRUE);
	jpeg_start_compress(&c, TRUE);
	for (int y = 0; y < h; y++) {
		JSAMPROW row = (JSAMPROW)(rgb + (size_t)y * (size_t)stride);
		jpeg_write_scanlines(&c, &row, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	*out = dest.buf;
	*outlen = dest.size;
	return NATIVE_CV_OK;
}

int native_cv_jpeg_info(const uint8_t *b, size_t n, int *w, int *h, int *components, char *err, int errn) {
	struct jpeg_decompress_struct d;
	struct native_jpeg_err e;
	native_jpeg_err_init(&e, err, errn);
	d.err = &e.pub;
	if (setjmp(e.jump)) {
		jpeg_destroy_decompress(&d);
		return NATIVE_CV_ERR;
	}
	jpeg_create_decompress(&d);
	jpeg_mem_src(&d, b, (unsigned long)n);
	jpeg_read_header(&d, TRUE);
	*w = (int)d.image_width;
	*h = (int)d.image_height;
	*components = d.num_components;
	jpeg_destroy_decompress(&d);
	if (e.warned)
		return NATIVE_CV_ERR;
	return NATIVE_CV_OK;
}

int native_cv_jpeg_decode(const uint8_t *b, size_t n, uint8_t *dst, int w, int h, int stride, char *err,
                          int errn) {
	struct jpeg_decompress_struct d;
	struct native_jpeg_err e;
	native_jpeg_err_init(&e, err, errn);
	d.err = &e.pub;
	if (setjmp(e.jump)) {
		jpeg_destroy_decompress(&d);
		return NATIVE_CV_ERR;
	}
	jpeg_create_decompress(&d);
	jpeg_mem_src(&d, b, (unsigned long)n);
	jpeg_read_header(&d, TRUE);
	if ((int)d.image_width != w || (int)d.image_height != h || d.num_components == 4) {
		if (err != NULL && errn > 0)
			snprintf(err, (size_t)errn, "%ux%u with %d components, not the %dx%d RGB or grey image asked for",
			         d.image_width, d.image_height, d.num_components, w, h);
		jpeg_destroy_decompress(&d);
		return NATIVE_CV_ERR;
	}
	// As OpenCV for IMREAD_COLOR with 1 or 3 components: RGB out (grey replicated), libjpeg's default
	// IDCT (JDCT_ISLOW) and fancy upsampling.
	d.out_color_space = JCS_RGB;
	jpeg_start_decompress(&d);
	while (d.output_scanline < d.output_height) {
		JSAMPROW row = (JSAMPROW)(dst + (size_t)d.output_scanline * (size_t)stride);
		if (jpeg_read_scanlines(&d, &row, 1) != 1)
			break;
	}
	if (d.output_scanline < d.output_height) {
		if (err != NULL && errn > 0 && !e.warned)
			snprintf(err, (size_t)errn, "stopped at row %u of %u", d.output_scanline, d.output_height);
		jpeg_destroy_decompress(&d);
		return NATIVE_CV_ERR;
	}
	jpeg_finish_decompress(&d);
	jpeg_destroy_decompress(&d);
	if (e.warned)
		return NATIVE_CV_ERR;
	return NATIVE_CV_OK;
}
