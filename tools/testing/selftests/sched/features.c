// SPDX-License-Identifier: GPL-2.0
/*
 * The sched_feat flags of the series: present at their defaults, each one
 * toggles and reads back without touching any other flag, and malformed
 * writes to /sys/kernel/debug/sched/features fail with EINVAL and change
 * nothing.  Every flag is restored on exit.
 */
#include "sched_feat.h"

static const char *const series_flags[] = {
	"MISFIT", "LB_CLASSIFY", "SIS_ASYM_PREV", "RESCHED_INELIGIBLE", NULL,
};

FIXTURE(features) {
};

FIXTURE_SETUP(features)
{
	sf_restore();
}

FIXTURE_TEARDOWN(features)
{
	sf_restore();
}

TEST_F(features, defaults)
{
	EXPECT_EQ(1, sf_get("MISFIT"));
	EXPECT_EQ(1, sf_get("LB_CLASSIFY"));
	EXPECT_EQ(1, sf_get("SIS_ASYM_PREV"));
	EXPECT_EQ(0, sf_get("RESCHED_INELIGIBLE"));
}

/*
 * Copy @line to @out as single-space separated tokens, leaving out @name
 * in either polarity, so that lines can be compared for the other flags.
 */
static void other_flags(const char *line, const char *name, char *out,
			size_t size)
{
	size_t pos = 0, len, nlen = strlen(name), off = 0;
	const char *tok;

	out[0] = '\0';
	while ((tok = sf_token(line, &pos, &len))) {
		if ((len == nlen && !strncmp(tok, name, nlen)) ||
		    (len == nlen + 3 && !strncmp(tok, "NO_", 3) &&
		     !strncmp(tok + 3, name, nlen)))
			continue;
		if (off + len + 2 > size)
			break;
		memcpy(out + off, tok, len);
		off += len;
		out[off++] = ' ';
		out[off] = '\0';
	}
}

/*
 * The last feature in the file has the highest bit of the feature word:
 * with the four flags of the series that is bit 32 or more, above what a
 * 32-bit word holds.  It must toggle and read back like any other, and
 * leave the others alone.
 */
TEST_F(features, last_toggles)
{
	char line[SF_LINE_MAX], before[SF_LINE_MAX], after[SF_LINE_MAX];
	char name[64];
	size_t pos = 0, len, last_len = 0;
	const char *tok, *last = NULL;
	int orig, count = 0;

	ASSERT_EQ(0, sf_read_features(line, sizeof(line)));
	while ((tok = sf_token(line, &pos, &len))) {
		last = tok;
		last_len = len;
		count++;
	}
	ASSERT_NE(NULL, last);
	if (!strncmp(last, "NO_", 3)) {
		last += 3;
		last_len -= 3;
	}
	ASSERT_GT(sizeof(name), last_len);
	memcpy(name, last, last_len);
	name[last_len] = '\0';
	TH_LOG("%d features, last %s", count, name);

	orig = sf_get(name);
	ASSERT_LE(0, orig);
	other_flags(line, name, before, sizeof(before));
	ASSERT_EQ(0, sf_set(name, !orig))
		TH_LOG("setting %s%s", orig ? "NO_" : "", name);
	ASSERT_EQ(0, sf_read_features(line, sizeof(line)));
	other_flags(line, name, after, sizeof(after));
	EXPECT_STREQ(before, after)
		TH_LOG("writing %s%s changed other flags", orig ? "NO_" : "", name);
	ASSERT_EQ(0, sf_set(name, orig));
}

FIXTURE(toggle) {
};

FIXTURE_VARIANT(toggle) {
	const char *flag;
};

FIXTURE_VARIANT_ADD(toggle, misfit) {
	.flag	= "MISFIT",
};

FIXTURE_VARIANT_ADD(toggle, lb_classify) {
	.flag	= "LB_CLASSIFY",
};

FIXTURE_VARIANT_ADD(toggle, sis_asym_prev) {
	.flag	= "SIS_ASYM_PREV",
};

FIXTURE_VARIANT_ADD(toggle, resched_ineligible) {
	.flag	= "RESCHED_INELIGIBLE",
};

FIXTURE_SETUP(toggle)
{
	sf_restore();
}

FIXTURE_TEARDOWN(toggle)
{
	sf_restore();
}

TEST_F(toggle, set_and_read_back)
{
	char line[SF_LINE_MAX], before[SF_LINE_MAX], after[SF_LINE_MAX];
	int orig, round;
	bool want;

	orig = sf_get(variant->flag);
	ASSERT_LE(0, orig);
	ASSERT_EQ(0, sf_read_features(line, sizeof(line)));
	other_flags(line, variant->flag, before, sizeof(before));

	/* Flip, flip back, and once more in each direction. */
	for (round = 0; round < 4; round++) {
		want = (round & 1) ? orig : !orig;
		ASSERT_EQ(0, sf_set(variant->flag, want))
			TH_LOG("setting %s%s", want ? "" : "NO_", variant->flag);
		EXPECT_EQ(want, sf_get(variant->flag));
		ASSERT_EQ(0, sf_read_features(line, sizeof(line)));
		other_flags(line, variant->flag, after, sizeof(after));
		EXPECT_STREQ(before, after)
			TH_LOG("writing %s%s changed other flags",
			       want ? "" : "NO_", variant->flag);
	}
	/* Writing the current state again is accepted and is a no-op. */
	ASSERT_EQ(0, sf_set(variant->flag, orig));
	ASSERT_EQ(0, sf_set(variant->flag, orig));
	EXPECT_EQ(orig, sf_get(variant->flag));
}

FIXTURE(bad_write) {
	char big[4096];
};

FIXTURE_VARIANT(bad_write) {
	const char *desc;
	const char *buf;
	size_t len;
	int fill;		/* use a 4 KiB buffer: prefix buf, then this byte */
};

FIXTURE_VARIANT_ADD(bad_write, unknown) {
	.desc	= "unknown name",
	.buf	= "NO_SUCH_SCHED_FEAT_XYZ",
	.len	= 22,
};

FIXTURE_VARIANT_ADD(bad_write, no_unknown) {
	.desc	= "NO_ + unknown name",
	.buf	= "NO_NO_SUCH_SCHED_FEAT_XYZ",
	.len	= 25,
};

FIXTURE_VARIANT_ADD(bad_write, lower_case) {
	.desc	= "lower-case flag name",
	.buf	= "misfit",
	.len	= 6,
};

FIXTURE_VARIANT_ADD(bad_write, bare_no) {
	.desc	= "bare NO_",
	.buf	= "NO_",
	.len	= 3,
};

FIXTURE_VARIANT_ADD(bad_write, empty) {
	.desc	= "zero-length write",
	.buf	= "",
	.len	= 0,
};

FIXTURE_VARIANT_ADD(bad_write, newline) {
	.desc	= "lone newline",
	.buf	= "\n",
	.len	= 1,
};

FIXTURE_VARIANT_ADD(bad_write, page_of_junk) {
	.desc	= "4 KiB of 'A'",
	.buf	= "",
	.len	= 4096,
	.fill	= 'A',
};

FIXTURE_VARIANT_ADD(bad_write, page_valid_prefix) {
	.desc	= "4 KiB starting with NO_MISFIT",
	.buf	= "NO_MISFIT",
	.len	= 4096,
	.fill	= 'X',
};

/* Used to be cut to 63 bytes and stripped: NO_MISFIT took effect. */
FIXTURE_VARIANT_ADD(bad_write, page_valid_then_blanks) {
	.desc	= "NO_MISFIT and blanks up to 4 KiB",
	.buf	= "NO_MISFIT",
	.len	= 4096,
	.fill	= ' ',
};

FIXTURE_SETUP(bad_write)
{
	sf_restore();
	if (variant->fill) {
		memset(self->big, variant->fill, sizeof(self->big));
		memcpy(self->big, variant->buf, strlen(variant->buf));
	}
}

FIXTURE_TEARDOWN(bad_write)
{
	sf_restore();
}

TEST_F(bad_write, einval_and_unchanged)
{
	char before[SF_LINE_MAX], after[SF_LINE_MAX];
	const char *buf = variant->fill ? self->big : variant->buf;
	ssize_t n;
	int fd;

	ASSERT_EQ(0, sf_read_features(before, sizeof(before)));
	fd = open(SF_FEATURES, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	errno = 0;
	n = write(fd, buf, variant->len);
	EXPECT_EQ(-1, n)
		TH_LOG("%s: write returned %zd", variant->desc, n);
	EXPECT_EQ(EINVAL, errno)
		TH_LOG("%s: errno %d (%s)", variant->desc, errno, strerror(errno));
	close(fd);
	ASSERT_EQ(0, sf_read_features(after, sizeof(after)));
	EXPECT_STREQ(before, after)
		TH_LOG("%s changed the features", variant->desc);
}

int main(int argc, char **argv)
{
	sf_init(series_flags);
	return test_harness_run(argc, argv);
}
