/* The sessions model of MPI 4.0 (chapter 11), for programs that start MPI
 * through MPI_Session_init instead of MPI_Init (OSU 7.4 does with
 * --session).
 *
 * A rank's first MPI_Session_init starts the rank's MPI as MPI_Init_thread would,
 * unless MPI_Init already did; its last MPI_Session_finalize ends it again
 * (MPI_Finalize) if a session started it.  Two process sets exist,
 * "mpi://WORLD" and "mpi://SELF"; MPI_Comm_create_from_group makes a
 * communicator of a group of them, like MPI_Comm_create_group over
 * MPI_COMM_WORLD with a tag derived from the string tag.  A session's error
 * handler is called by MPI_Session_call_errhandler; the session calls
 * themselves report their errors to MPI_COMM_WORLD's handler.  Info keys
 * change nothing.
 *
 * A session's buffer for buffered sends (MPI 4.1) serves the communicators
 * MPI_Comm_create_from_group makes of its groups: the session remembers the
 * last groups MPI_Group_from_session_pset gave out, and a group it does
 * not know (one derived from them) counts as the newest session's. */
#include "env/env_errh.h"
#include "pt2pt/p2p_api.h"
#include "pt2pt/p2p_bsend.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SESSION_GROUPS 8

struct AMPI_Session_s {
    int world; /* the rank that made it */
    MPI_Errhandler errh;
    p2p_bsend_state_t *bsend; /* MPI_Session_attach_buffer's, or NULL */
    MPI_Group groups[SESSION_GROUPS]; /* the last ones made from its process sets */
    unsigned ngroups;
    struct AMPI_Session_s *next; /* the rank's open sessions, newest first */
};

/* Per local rank: open sessions (count and list), and whether a session
 * started MPI. */
static int *open_sessions;
static struct AMPI_Session_s **session_list;
static bool *started_by_session;

static const char *const psets[] = { "mpi://WORLD", "mpi://SELF" };
#define NPSETS 2

static int local_index(const p2p_rank_t *r) { return r->core.world - core_proc.first; }

#pragma weak MPI_Session_init = PMPI_Session_init
int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    (void)info;
    p2p_rank_t *r = p2p_self();
    if (!r)
        return core_not_initialized("MPI_Session_init");
    if (!session)
        return r->core.initialized ? core_error(NULL, MPI_ERR_ARG, "MPI_Session_init") : MPI_ERR_ARG;
    if (!open_sessions) { /* the ranks of a process share one PE: no race */
        open_sessions = calloc((size_t)core_proc.nlocal, sizeof *open_sessions);
        started_by_session = calloc((size_t)core_proc.nlocal, sizeof *started_by_session);
        session_list = calloc((size_t)core_proc.nlocal, sizeof *session_list);
        if (!open_sessions || !started_by_session || !session_list)
            return MPI_ERR_NO_MEM;
    }
    int i = local_index(r);
    if (!r->core.initialized) {
        if (r->core.finalized) /* MPI cannot start again in this library */
            return MPI_ERR_OTHER;
        int provided, err = PMPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
        if (err)
            return err;
        started_by_session[i] = true;
    }
    struct AMPI_Session_s *s = malloc(sizeof *s);
    if (!s)
        return core_error(NULL, MPI_ERR_NO_MEM, "MPI_Session_init");
    *s = (struct AMPI_Session_s){ .world = r->core.world, .errh = errhandler, .next = session_list[i] };
    session_list[i] = s;
    open_sessions[i]++;
    *session = s;
    return MPI_SUCCESS;
}

/* The calling rank's open session behind handle s, or NULL after the error. */
static struct AMPI_Session_s *session_get(p2p_rank_t *r, MPI_Session s, const char *fn)
{
    if (!s || s->world != r->core.world) {
        core_error(NULL, MPI_ERR_ARG, fn);
        return NULL;
    }
    return s;
}

/* An error of a call on session h goes to the session's handler (the one
 * MPI_Session_init or MPI_Session_set_errhandler gave), not to
 * MPI_COMM_WORLD's: a session program may have no MPI_COMM_WORLD at all. */
static int session_error(struct AMPI_Session_s *s, MPI_Session h, int errclass, const char *fn)
{
    return core_error_apply(s->errh, &h, errclass, fn, NULL);
}

/* Every session call starts here: R is the calling rank, S its session
 * behind handle h; bad, a test of the call's other arguments, fails it with
 * MPI_ERR_ARG, so that each call states its argument rule in one place. */
#define SESSION_ENTER(R, S, h, bad, fn)                       \
    P2P_ENTER(R, fn);                                         \
    struct AMPI_Session_s *S = session_get(R, h, fn);         \
    if (!S)                                                   \
        return MPI_ERR_ARG;                                   \
    (void)R, (void)S;                                         \
    if (bad)                                                  \
        return session_error(S, h, MPI_ERR_ARG, fn)

#pragma weak MPI_Session_finalize = PMPI_Session_finalize
int PMPI_Session_finalize(MPI_Session *session)
{
    if (!session)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Session_finalize");
    SESSION_ENTER(r, s, *session, false, "MPI_Session_finalize");
    int i = local_index(r);
    p2p_bsend_free(s->bsend);
    for (struct AMPI_Session_s **p = &session_list[i]; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    free(s);
    *session = MPI_SESSION_NULL;
    if (--open_sessions[i] == 0 && started_by_session[i]) {
        started_by_session[i] = false;
        return PMPI_Finalize();
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_get_num_psets = PMPI_Session_get_num_psets
int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    (void)info;
    SESSION_ENTER(r, s, session, !npset_names, "MPI_Session_get_num_psets");
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}

/* *pset_len in: room (0: only ask the length); out: the name's length + 1. */
#pragma weak MPI_Session_get_nth_pset = PMPI_Session_get_nth_pset
int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name)
{
    (void)info;
    SESSION_ENTER(r, s, session, n < 0 || n >= NPSETS || !pset_len || *pset_len < 0, "MPI_Session_get_nth_pset");
    int len = (int)strlen(psets[n]);
    if (*pset_len > 0) {
        if (!pset_name)
            return session_error(s, session, MPI_ERR_ARG, "MPI_Session_get_nth_pset");
        int k = len < *pset_len - 1 ? len : *pset_len - 1;
        memcpy(pset_name, psets[n], (size_t)k);
        pset_name[k] = '\0';
    }
    *pset_len = len + 1;
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_get_info = PMPI_Session_get_info
int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    SESSION_ENTER(r, s, session, !info_used, "MPI_Session_get_info");
    return PMPI_Info_create(info_used);
}

static int pset_index(const char *name)
{
    for (int i = 0; name && i < NPSETS; i++)
        if (strcmp(name, psets[i]) == 0)
            return i;
    return -1;
}

/* The info of a process set: its size under "mpi_size". */
#pragma weak MPI_Session_get_pset_info = PMPI_Session_get_pset_info
int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    int p = pset_index(pset_name);
    SESSION_ENTER(r, s, session, p < 0 || !info, "MPI_Session_get_pset_info");
    char size[16];
    snprintf(size, sizeof size, "%d", p == 0 ? core_proc.nranks : 1);
    int err = PMPI_Info_create(info);
    return err ? err : PMPI_Info_set(*info, "mpi_size", size);
}

#pragma weak MPI_Group_from_session_pset = PMPI_Group_from_session_pset
int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    int p = pset_index(pset_name);
    SESSION_ENTER(r, s, session, p < 0 || !newgroup, "MPI_Group_from_session_pset");
    int err = PMPI_Comm_group(p == 0 ? MPI_COMM_WORLD : MPI_COMM_SELF, newgroup);
    if (!err)
        s->groups[s->ngroups++ % SESSION_GROUPS] = *newgroup;
    return err;
}

/* The session group g came from (see the head of this file), or NULL. */
static struct AMPI_Session_s *session_of_group(p2p_rank_t *r, MPI_Group g)
{
    struct AMPI_Session_s *newest = session_list ? session_list[local_index(r)] : NULL;
    for (struct AMPI_Session_s *s = newest; s; s = s->next)
        for (unsigned k = 0; k < SESSION_GROUPS && k < s->ngroups; k++)
            if (s->groups[k] == g)
                return s;
    return newest;
}

/* Members that pass the same string tag get the same communicator tag: a
 * hash of the string (FNV-1a), kept non-negative. */
static int tag_of(const char *stringtag)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)stringtag; *p; p++)
        h = (h ^ *p) * 16777619u;
    return (int)(h & 0x3fffffff);
}

#pragma weak MPI_Comm_create_from_group = PMPI_Comm_create_from_group
int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                MPI_Comm *newcomm)
{
    (void)info;
    P2P_ENTER(r, "MPI_Comm_create_from_group");
    if (!stringtag || !newcomm)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Comm_create_from_group");
    int err = PMPI_Comm_create_group(MPI_COMM_WORLD, group, tag_of(stringtag), newcomm);
    core_comm_t *c = err ? NULL : p2p_comm(r, *newcomm);
    struct AMPI_Session_s *s = c ? session_of_group(r, group) : NULL;
    if (s)
        c->session_bsend = &s->bsend;
    if (!err && *newcomm != MPI_COMM_NULL && errhandler != MPI_ERRHANDLER_NULL)
        err = PMPI_Comm_set_errhandler(*newcomm, errhandler);
    return err;
}

#pragma weak MPI_Session_create_errhandler = PMPI_Session_create_errhandler
int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn,
                                   MPI_Errhandler *errhandler)
{
    return env_errh_create(ENV_ERRH_SESSION, (void (*)(void))session_errhandler_fn, errhandler,
                           "MPI_Session_create_errhandler");
}

#pragma weak MPI_Session_set_errhandler = PMPI_Session_set_errhandler
int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    SESSION_ENTER(r, s, session, !env_errh_usable(errhandler, ENV_ERRH_SESSION), "MPI_Session_set_errhandler");
    s->errh = errhandler;
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_get_errhandler = PMPI_Session_get_errhandler
int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    SESSION_ENTER(r, s, session, !errhandler, "MPI_Session_get_errhandler");
    *errhandler = env_errh_get(s->errh);
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_call_errhandler = PMPI_Session_call_errhandler
int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    SESSION_ENTER(r, s, session, false, "MPI_Session_call_errhandler");
    if (s->errh != MPI_ERRORS_RETURN) /* a fatal handler ends the job here */
        core_error_apply(s->errh, &session, errorcode, "MPI_Session_call_errhandler", "the session's handler");
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_attach_buffer = PMPI_Session_attach_buffer
int PMPI_Session_attach_buffer(MPI_Session session, void *buffer, int size)
{
    return PMPI_Session_attach_buffer_c(session, buffer, size);
}

#pragma weak MPI_Session_attach_buffer_c = PMPI_Session_attach_buffer_c
int PMPI_Session_attach_buffer_c(MPI_Session session, void *buffer, MPI_Count size)
{
    SESSION_ENTER(r, s, session, false, "MPI_Session_attach_buffer");
    int err = p2p_bsend_attach(&s->bsend, buffer, size);
    return err ? session_error(s, session, err, "MPI_Session_attach_buffer") : MPI_SUCCESS;
}

#pragma weak MPI_Session_detach_buffer_c = PMPI_Session_detach_buffer_c
int PMPI_Session_detach_buffer_c(MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    SESSION_ENTER(r, s, session, !buffer_addr || !size, "MPI_Session_detach_buffer");
    int err = p2p_bsend_detach(&s->bsend, (void **)buffer_addr, size);
    return err ? session_error(s, session, err, "MPI_Session_detach_buffer") : MPI_SUCCESS;
}

#pragma weak MPI_Session_detach_buffer = PMPI_Session_detach_buffer
int PMPI_Session_detach_buffer(MPI_Session session, void *buffer_addr, int *size)
{
    if (!size)
        return PMPI_Session_detach_buffer_c(session, buffer_addr, NULL);
    MPI_Count n = 0;
    int err = PMPI_Session_detach_buffer_c(session, buffer_addr, &n);
    *size = n > INT_MAX ? INT_MAX : (int)n; /* attached through an int, but by the large-count call */
    return err;
}

#pragma weak MPI_Session_flush_buffer = PMPI_Session_flush_buffer
int PMPI_Session_flush_buffer(MPI_Session session)
{
    SESSION_ENTER(r, s, session, false, "MPI_Session_flush_buffer");
    p2p_bsend_flush(s->bsend);
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_iflush_buffer = PMPI_Session_iflush_buffer
int PMPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    SESSION_ENTER(r, s, session, !request, "MPI_Session_iflush_buffer");
    int err = p2p_bsend_iflush(r, s->bsend, request);
    return err ? session_error(s, session, err, "MPI_Session_iflush_buffer") : MPI_SUCCESS;
}
