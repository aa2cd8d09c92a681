// The reference the trace.dat tests compare the importer with: libtracecmd's
// own record iteration, libtraceevent's field lookup and event printing, and
// kbuffer's page walk. A C interface, because trace-cmd.h includes tracefs.h,
// which is not valid C++ (tracecmd_oracle.c is compiled as C).
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/// Called for every record libtracecmd delivers, in its merged order.
/// prev_state is what libtraceevent prints for a sched_switch ("S", "R+", "D|K"),
/// else NULL. Return non-zero to stop.
typedef int (*oracle_record_fn)(void* ctx, int cpu, unsigned long long ts, int type, const char* prev_state);

/// Opens `path` with tracecmd_open (no plugins: events print through their
/// print fmt) and iterates all records. Returns 0, or -1 if libtracecmd refused the file.
int oracle_iterate(const char* path, oracle_record_fn fn, void* ctx);

/// The file's headers opened with tracecmd_open_head, for field lookups.
struct oracle_head;
struct oracle_head* oracle_open_head(const char* path);
void oracle_close_head(struct oracle_head* head);
/// Offset and size of a field as libtraceevent parsed it; 0, or -1 when absent.
int oracle_field(struct oracle_head* head, const char* system, const char* event, const char* field, int* offset,
                 int* size);

struct oracle_kbuf_record {
  unsigned long long ts;
  int offset;  /* of the record's header in the page */
  int size;    /* of its data */
};
/// Walks one ring-buffer page with kbuffer. Returns the record count (at most
/// `max` stored), and the page's missed-events value.
int oracle_kbuffer_page(void* page, int long_size, int big_endian, struct oracle_kbuf_record* out, int max,
                        long long* missed);

#ifdef __cplusplus
}
#endif
