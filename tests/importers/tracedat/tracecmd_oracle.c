#include "tracecmd_oracle.h"

#include <kbuffer.h>
#include <string.h>
#include <trace-cmd.h>

struct iterate_ctx {
  oracle_record_fn fn;
  void* ctx;
  struct tep_handle* tep;
  int switch_id;
  struct trace_seq seq;
};

static int on_record(struct tracecmd_input* handle, struct tep_record* record, int cpu, void* data) {
  struct iterate_ctx* c = data;
  (void)handle;
  const int type = tep_data_type(c->tep, record);
  char letters[64] = {0};
  const char* prev_state = NULL;
  if (type == c->switch_id) {
    struct tep_event* event = tep_find_event(c->tep, type);
    trace_seq_reset(&c->seq);
    tep_print_event(c->tep, &c->seq, record, "%s", TEP_PRINT_INFO);
    trace_seq_terminate(&c->seq);
    const char* p = strstr(c->seq.buffer, "prev_state=");
    if (event && p) {
      p += strlen("prev_state=");
      size_t n = strcspn(p, " ");
      if (n >= sizeof letters) n = sizeof letters - 1;
      memcpy(letters, p, n);
      prev_state = letters;
    }
  }
  return c->fn(c->ctx, cpu, record->ts, type, prev_state);
}

int oracle_iterate(const char* path, oracle_record_fn fn, void* ctx) {
  tracecmd_set_loglevel(TEP_LOG_NONE);
  tep_set_loglevel(TEP_LOG_NONE);
  struct tracecmd_input* handle = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
  if (!handle) return -1;
  struct iterate_ctx c;
  c.fn = fn;
  c.ctx = ctx;
  c.tep = tracecmd_get_tep(handle);
  struct tep_event* sw = tep_find_event_by_name(c.tep, "sched", "sched_switch");
  c.switch_id = sw ? sw->id : -1;
  trace_seq_init(&c.seq);
  tracecmd_iterate_events(handle, NULL, 0, on_record, &c);
  trace_seq_destroy(&c.seq);
  tracecmd_close(handle);
  return 0;
}

struct oracle_head* oracle_open_head(const char* path) {
  tracecmd_set_loglevel(TEP_LOG_NONE);
  tep_set_loglevel(TEP_LOG_NONE);
  return (struct oracle_head*)tracecmd_open_head(path, TRACECMD_FL_LOAD_NO_PLUGINS);
}

void oracle_close_head(struct oracle_head* head) { tracecmd_close((struct tracecmd_input*)head); }

int oracle_field(struct oracle_head* head, const char* system, const char* event, const char* field, int* offset,
                 int* size) {
  struct tep_event* e = tep_find_event_by_name(tracecmd_get_tep((struct tracecmd_input*)head), system, event);
  struct tep_format_field* f = e ? tep_find_any_field(e, field) : NULL;
  if (!f) return -1;
  *offset = f->offset;
  *size = f->size;
  return 0;
}

int oracle_kbuffer_page(void* page, int long_size, int big_endian, struct oracle_kbuf_record* out, int max,
                        long long* missed) {
  struct kbuffer* kbuf = kbuffer_alloc(long_size == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
                                       big_endian ? KBUFFER_ENDIAN_BIG : KBUFFER_ENDIAN_LITTLE);
  if (!kbuf) return -1;
  kbuffer_load_subbuffer(kbuf, page);
  *missed = kbuffer_missed_events(kbuf);
  int n = 0;
  unsigned long long ts;
  for (void* data = kbuffer_read_event(kbuf, &ts); data; data = kbuffer_next_event(kbuf, &ts)) {
    if (n < max) {
      out[n].ts = ts;
      out[n].offset = kbuffer_curr_offset(kbuf);
      out[n].size = kbuffer_event_size(kbuf);
    }
    ++n;
  }
  kbuffer_free(kbuf);
  return n;
}
