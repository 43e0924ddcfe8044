/* AMPI-UCX: the rest of MPI 3.1's C interface, included by mpi.h (include
 * mpi.h, not this file).  mpi.h holds the core (handles, point-to-point,
 * collectives, communicators, datatypes); this file the values and
 * functions of the other chapters: error handlers and classes of files and
 * windows, caching on datatypes and windows, external interfaces
 * (generalized requests, status setters), handle conversion, the tool
 * information interface (MPI_T), dynamic processes and MPI-IO.  Which of them
 * return MPI_ERR_UNSUPPORTED_OPERATION is listed in docs/unsupported.md. */
#ifndef AMPI_MPI_MORE_H
#define AMPI_MPI_MORE_H

#ifndef AMPI_MPI_H
#error "include mpi.h, not mpi_more.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- error classes of the tool information interface (MPI_T) ---- */
#define MPI_T_ERR_MEMORY 58
#define MPI_T_ERR_NOT_INITIALIZED 59
#define MPI_T_ERR_CANNOT_INIT 60
#define MPI_T_ERR_INVALID 61
#define MPI_T_ERR_INVALID_INDEX 62
#define MPI_T_ERR_INVALID_ITEM 63
#define MPI_T_ERR_INVALID_SESSION 64
#define MPI_T_ERR_INVALID_HANDLE 65
#define MPI_T_ERR_INVALID_NAME 66
#define MPI_T_ERR_OUT_OF_HANDLES 67
#define MPI_T_ERR_OUT_OF_SESSIONS 68
#define MPI_T_ERR_CVAR_SET_NOT_NOW 69
#define MPI_T_ERR_CVAR_SET_NEVER 70
#define MPI_T_ERR_PVAR_NO_STARTSTOP 71
#define MPI_T_ERR_PVAR_NO_WRITE 72
#define MPI_T_ERR_PVAR_NO_ATOMIC 73

/* ---- C++ datatypes and the Fortran datatypes of fixed size, usable from C.
 * The optional types no C type matches (INTEGER16, REAL2, REAL16, COMPLEX4,
 * COMPLEX32) are MPI_DATATYPE_NULL, as MPI allows. ---- */
#define MPI_CXX_BOOL ((MPI_Datatype)51)
#define MPI_CXX_FLOAT_COMPLEX ((MPI_Datatype)52)
#define MPI_CXX_DOUBLE_COMPLEX ((MPI_Datatype)53)
#define MPI_CXX_LONG_DOUBLE_COMPLEX ((MPI_Datatype)54)
#define MPI_INTEGER1 ((MPI_Datatype)55)
#define MPI_INTEGER2 ((MPI_Datatype)56)
#define MPI_INTEGER4 ((MPI_Datatype)57)
#define MPI_INTEGER8 ((MPI_Datatype)58)
#define MPI_REAL4 ((MPI_Datatype)59)
#define MPI_REAL8 ((MPI_Datatype)60)
#define MPI_COMPLEX8 ((MPI_Datatype)61)
#define MPI_COMPLEX16 ((MPI_Datatype)62)
#define MPI_INTEGER16 MPI_DATATYPE_NULL
#define MPI_REAL2 MPI_DATATYPE_NULL
#define MPI_REAL16 MPI_DATATYPE_NULL
#define MPI_COMPLEX4 MPI_DATATYPE_NULL
#define MPI_COMPLEX32 MPI_DATATYPE_NULL

/* MPI_Type_match_size */
#define MPI_TYPECLASS_REAL 1
#define MPI_TYPECLASS_INTEGER 2
#define MPI_TYPECLASS_COMPLEX 3

/* MPI_Type_create_darray */
#define MPI_DISTRIBUTE_BLOCK 121
#define MPI_DISTRIBUTE_CYCLIC 122
#define MPI_DISTRIBUTE_NONE 123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)

/* ---- windows: attribute keys, flavors, memory models ---- */
#define MPI_WIN_BASE 8
#define MPI_WIN_SIZE 9
#define MPI_WIN_DISP_UNIT 10
#define MPI_WIN_CREATE_FLAVOR 11
#define MPI_WIN_MODEL 12
#define MPI_WIN_FLAVOR_CREATE 1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC 3
#define MPI_WIN_FLAVOR_SHARED 4
#define MPI_WIN_SEPARATE 1
#define MPI_WIN_UNIFIED 2

/* ---- MPI-IO: access modes, seek, views ---- */
#define MPI_MODE_CREATE 0x001
#define MPI_MODE_RDONLY 0x002
#define MPI_MODE_WRONLY 0x004
#define MPI_MODE_RDWR 0x008
#define MPI_MODE_DELETE_ON_CLOSE 0x010
#define MPI_MODE_UNIQUE_OPEN 0x020
#define MPI_MODE_EXCL 0x040
#define MPI_MODE_APPEND 0x080
#define MPI_MODE_SEQUENTIAL 0x100
#define MPI_SEEK_SET 600
#define MPI_SEEK_CUR 602
#define MPI_SEEK_END 604
#define MPI_DISPLACEMENT_CURRENT ((MPI_Offset)-54278278)
#define MPI_MAX_DATAREP_STRING 128

/* ---- Fortran status conversion ---- */
typedef struct MPI_F08_status {
    MPI_Fint MPI_SOURCE;
    MPI_Fint MPI_TAG;
    MPI_Fint MPI_ERROR;
    MPI_Fint ampi_private[(sizeof(MPI_Status) / sizeof(MPI_Fint)) - 3];
} MPI_F08_status;
#define MPI_F_STATUS_IGNORE ((MPI_Fint *)0)
#define MPI_F_STATUSES_IGNORE ((MPI_Fint *)0)
#define MPI_F08_STATUS_IGNORE ((MPI_F08_status *)0)
#define MPI_F08_STATUSES_IGNORE ((MPI_F08_status *)0)

/* ---- callbacks ---- */
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval, void *attribute_val,
                                          void *extra_state);
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int win_keyval, void *extra_state, void *attribute_val_in,
                                       void *attribute_val_out, int *flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int win_keyval, void *attribute_val, void *extra_state);
typedef void MPI_Win_errhandler_function(MPI_Win *win, int *errcode, ...);
typedef void MPI_File_errhandler_function(MPI_File *file, int *errcode, ...);
typedef int MPI_Grequest_query_function(void *extra_state, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);
typedef int MPI_Datarep_extent_function(MPI_Datatype datatype, MPI_Aint *file_extent, void *extra_state);
typedef int MPI_Datarep_conversion_function(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                                            MPI_Offset position, void *extra_state);

int AMPI_Type_null_copy_fn(MPI_Datatype oldtype, int type_keyval, void *extra_state, void *attribute_val_in,
                           void *attribute_val_out, int *flag);
int AMPI_Type_dup_fn(MPI_Datatype oldtype, int type_keyval, void *extra_state, void *attribute_val_in,
                     void *attribute_val_out, int *flag);
int AMPI_Type_null_delete_fn(MPI_Datatype datatype, int type_keyval, void *attribute_val, void *extra_state);
int AMPI_Win_null_copy_fn(MPI_Win oldwin, int win_keyval, void *extra_state, void *attribute_val_in,
                          void *attribute_val_out, int *flag);
int AMPI_Win_dup_fn(MPI_Win oldwin, int win_keyval, void *extra_state, void *attribute_val_in,
                    void *attribute_val_out, int *flag);
int AMPI_Win_null_delete_fn(MPI_Win win, int win_keyval, void *attribute_val, void *extra_state);
#define MPI_TYPE_NULL_COPY_FN AMPI_Type_null_copy_fn
#define MPI_TYPE_DUP_FN AMPI_Type_dup_fn
#define MPI_TYPE_NULL_DELETE_FN AMPI_Type_null_delete_fn
#define MPI_WIN_NULL_COPY_FN AMPI_Win_null_copy_fn
#define MPI_WIN_DUP_FN AMPI_Win_dup_fn
#define MPI_WIN_NULL_DELETE_FN AMPI_Win_null_delete_fn
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function *)0)

/* ---- the tool information interface (MPI_T) ---- */
typedef struct AMPI_T_enum_s *MPI_T_enum;
typedef struct AMPI_T_cvar_handle_s *MPI_T_cvar_handle;
typedef struct AMPI_T_pvar_handle_s *MPI_T_pvar_handle;
typedef struct AMPI_T_pvar_session_s *MPI_T_pvar_session;
#define MPI_T_ENUM_NULL ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
#define MPI_T_PVAR_ALL_HANDLES ((MPI_T_pvar_handle)1)
#define MPI_T_VERBOSITY_USER_BASIC 1
#define MPI_T_VERBOSITY_USER_DETAIL 2
#define MPI_T_VERBOSITY_USER_ALL 3
#define MPI_T_VERBOSITY_TUNER_BASIC 4
#define MPI_T_VERBOSITY_TUNER_DETAIL 5
#define MPI_T_VERBOSITY_TUNER_ALL 6
#define MPI_T_VERBOSITY_MPIDEV_BASIC 7
#define MPI_T_VERBOSITY_MPIDEV_DETAIL 8
#define MPI_T_VERBOSITY_MPIDEV_ALL 9
#define MPI_T_BIND_NO_OBJECT 0
#define MPI_T_BIND_MPI_COMM 1
#define MPI_T_BIND_MPI_DATATYPE 2
#define MPI_T_BIND_MPI_ERRHANDLER 3
#define MPI_T_BIND_MPI_FILE 4
#define MPI_T_BIND_MPI_GROUP 5
#define MPI_T_BIND_MPI_OP 6
#define MPI_T_BIND_MPI_REQUEST 7
#define MPI_T_BIND_MPI_WIN 8
#define MPI_T_BIND_MPI_MESSAGE 9
#define MPI_T_BIND_MPI_INFO 10
#define MPI_T_SCOPE_CONSTANT 0
#define MPI_T_SCOPE_READONLY 1
#define MPI_T_SCOPE_LOCAL 2
#define MPI_T_SCOPE_GROUP 3
#define MPI_T_SCOPE_GROUP_EQ 4
#define MPI_T_SCOPE_ALL 5
#define MPI_T_SCOPE_ALL_EQ 6
#define MPI_T_PVAR_CLASS_STATE 0
#define MPI_T_PVAR_CLASS_LEVEL 1
#define MPI_T_PVAR_CLASS_SIZE 2
#define MPI_T_PVAR_CLASS_PERCENTAGE 3
#define MPI_T_PVAR_CLASS_HIGHWATERMARK 4
#define MPI_T_PVAR_CLASS_LOWWATERMARK 5
#define MPI_T_PVAR_CLASS_COUNTER 6
#define MPI_T_PVAR_CLASS_AGGREGATE 7
#define MPI_T_PVAR_CLASS_TIMER 8
#define MPI_T_PVAR_CLASS_GENERIC 9

/* Every function exists as MPI_x and PMPI_x (the profiling interface). */
#define AMPI_DECL(ret, name, args) ret MPI_##name args; ret PMPI_##name args

/* ---- environment: error classes and handlers ---- */
AMPI_DECL(int, Add_error_class, (int *errorclass));
AMPI_DECL(int, Add_error_code, (int errorclass, int *errorcode));
AMPI_DECL(int, Add_error_string, (int errorcode, const char *string));
AMPI_DECL(int, Comm_create_errhandler, (MPI_Comm_errhandler_function *comm_errhandler_fn,
                                        MPI_Errhandler *errhandler));
AMPI_DECL(int, Win_create_errhandler, (MPI_Win_errhandler_function *win_errhandler_fn,
                                       MPI_Errhandler *errhandler));
AMPI_DECL(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler));
AMPI_DECL(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler *errhandler));
AMPI_DECL(int, Win_call_errhandler, (MPI_Win win, int errorcode));
AMPI_DECL(int, File_create_errhandler, (MPI_File_errhandler_function *file_errhandler_fn,
                                        MPI_Errhandler *errhandler));
AMPI_DECL(int, File_set_errhandler, (MPI_File file, MPI_Errhandler errhandler));
AMPI_DECL(int, File_get_errhandler, (MPI_File file, MPI_Errhandler *errhandler));
AMPI_DECL(int, File_call_errhandler, (MPI_File fh, int errorcode));

/* ---- datatypes ---- */
AMPI_DECL(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp));
AMPI_DECL(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2));
AMPI_DECL(int, Pack_external, (const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
                               void *outbuf, MPI_Aint outsize, MPI_Aint *position));
AMPI_DECL(int, Pack_external_size, (const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size));
AMPI_DECL(int, Unpack_external, (const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position,
                                 void *outbuf, int outcount, MPI_Datatype datatype));
AMPI_DECL(int, Type_create_darray, (int size, int rank, int ndims, const int array_of_gsizes[],
                                    const int array_of_distribs[], const int array_of_dargs[],
                                    const int array_of_psizes[], int order, MPI_Datatype oldtype,
                                    MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_f90_integer, (int r, MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_f90_real, (int p, int r, MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_f90_complex, (int p, int r, MPI_Datatype *newtype));
AMPI_DECL(int, Type_match_size, (int typeclass, int size, MPI_Datatype *datatype));

/* ---- caching on datatypes and windows ---- */
AMPI_DECL(int, Type_create_keyval, (MPI_Type_copy_attr_function *type_copy_attr_fn,
                                    MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                                    void *extra_state));
AMPI_DECL(int, Type_free_keyval, (int *type_keyval));
AMPI_DECL(int, Type_set_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val));
AMPI_DECL(int, Type_get_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag));
AMPI_DECL(int, Type_delete_attr, (MPI_Datatype datatype, int type_keyval));
AMPI_DECL(int, Win_create_keyval, (MPI_Win_copy_attr_function *win_copy_attr_fn,
                                   MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                                   void *extra_state));
AMPI_DECL(int, Win_free_keyval, (int *win_keyval));
AMPI_DECL(int, Win_set_attr, (MPI_Win win, int win_keyval, void *attribute_val));
AMPI_DECL(int, Win_get_attr, (MPI_Win win, int win_keyval, void *attribute_val, int *flag));
AMPI_DECL(int, Win_delete_attr, (MPI_Win win, int win_keyval));
AMPI_DECL(int, Win_set_name, (MPI_Win win, const char *win_name));
AMPI_DECL(int, Win_get_name, (MPI_Win win, char *win_name, int *resultlen));
AMPI_DECL(int, Win_set_info, (MPI_Win win, MPI_Info info));
AMPI_DECL(int, Win_get_info, (MPI_Win win, MPI_Info *info_used));

/* ---- communicators ---- */
AMPI_DECL(int, Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request));
AMPI_DECL(int, Comm_set_info, (MPI_Comm comm, MPI_Info info));
AMPI_DECL(int, Comm_get_info, (MPI_Comm comm, MPI_Info *info_used));

/* ---- external interfaces ---- */
AMPI_DECL(int, Grequest_start, (MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                                MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                                MPI_Request *request));
AMPI_DECL(int, Grequest_complete, (MPI_Request request));
AMPI_DECL(int, Status_set_elements_x, (MPI_Status *status, MPI_Datatype datatype, MPI_Count count));
AMPI_DECL(int, Pcontrol, (const int level, ...));

/* ---- handle conversion (language interoperability) ---- */
AMPI_DECL(MPI_Fint, Comm_c2f, (MPI_Comm comm));
AMPI_DECL(MPI_Comm, Comm_f2c, (MPI_Fint comm));
AMPI_DECL(MPI_Fint, Errhandler_c2f, (MPI_Errhandler errhandler));
AMPI_DECL(MPI_Errhandler, Errhandler_f2c, (MPI_Fint errhandler));
AMPI_DECL(MPI_Fint, File_c2f, (MPI_File file));
AMPI_DECL(MPI_File, File_f2c, (MPI_Fint file));
AMPI_DECL(MPI_Fint, Group_c2f, (MPI_Group group));
AMPI_DECL(MPI_Group, Group_f2c, (MPI_Fint group));
AMPI_DECL(MPI_Fint, Info_c2f, (MPI_Info info));
AMPI_DECL(MPI_Info, Info_f2c, (MPI_Fint info));
AMPI_DECL(MPI_Fint, Message_c2f, (MPI_Message message));
AMPI_DECL(MPI_Message, Message_f2c, (MPI_Fint message));
AMPI_DECL(MPI_Fint, Op_c2f, (MPI_Op op));
AMPI_DECL(MPI_Op, Op_f2c, (MPI_Fint op));
AMPI_DECL(MPI_Fint, Request_c2f, (MPI_Request request));
AMPI_DECL(MPI_Request, Request_f2c, (MPI_Fint request));
AMPI_DECL(MPI_Fint, Type_c2f, (MPI_Datatype datatype));
AMPI_DECL(MPI_Datatype, Type_f2c, (MPI_Fint datatype));
AMPI_DECL(MPI_Fint, Win_c2f, (MPI_Win win));
AMPI_DECL(MPI_Win, Win_f2c, (MPI_Fint win));
AMPI_DECL(int, Status_c2f, (const MPI_Status *c_status, MPI_Fint *f_status));
AMPI_DECL(int, Status_f2c, (const MPI_Fint *f_status, MPI_Status *c_status));
AMPI_DECL(int, Status_c2f08, (const MPI_Status *c_status, MPI_F08_status *f08_status));
AMPI_DECL(int, Status_f082c, (const MPI_F08_status *f08_status, MPI_Status *c_status));

/* ---- the tool information interface: no variables, no categories ---- */
AMPI_DECL(int, T_init_thread, (int required, int *provided));
AMPI_DECL(int, T_finalize, (void));
AMPI_DECL(int, T_enum_get_info, (MPI_T_enum enumtype, int *num, char *name, int *name_len));
AMPI_DECL(int, T_enum_get_item, (MPI_T_enum enumtype, int index, int *value, char *name, int *name_len));
AMPI_DECL(int, T_cvar_get_num, (int *num_cvar));
AMPI_DECL(int, T_cvar_get_info, (int cvar_index, char *name, int *name_len, int *verbosity,
                                 MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                                 int *bind, int *scope));
AMPI_DECL(int, T_cvar_get_index, (const char *name, int *cvar_index));
AMPI_DECL(int, T_cvar_handle_alloc, (int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count));
AMPI_DECL(int, T_cvar_handle_free, (MPI_T_cvar_handle *handle));
AMPI_DECL(int, T_cvar_read, (MPI_T_cvar_handle handle, void *buf));
AMPI_DECL(int, T_cvar_write, (MPI_T_cvar_handle handle, const void *buf));
AMPI_DECL(int, T_pvar_get_num, (int *num_pvar));
AMPI_DECL(int, T_pvar_get_info, (int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                                 MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                                 int *bind, int *readonly, int *continuous, int *atomic));
AMPI_DECL(int, T_pvar_get_index, (const char *name, int var_class, int *pvar_index));
AMPI_DECL(int, T_pvar_session_create, (MPI_T_pvar_session *session));
AMPI_DECL(int, T_pvar_session_free, (MPI_T_pvar_session *session));
AMPI_DECL(int, T_pvar_handle_alloc, (MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                                     MPI_T_pvar_handle *handle, int *count));
AMPI_DECL(int, T_pvar_handle_free, (MPI_T_pvar_session session, MPI_T_pvar_handle *handle));
AMPI_DECL(int, T_pvar_start, (MPI_T_pvar_session session, MPI_T_pvar_handle handle));
AMPI_DECL(int, T_pvar_stop, (MPI_T_pvar_session session, MPI_T_pvar_handle handle));
AMPI_DECL(int, T_pvar_read, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf));
AMPI_DECL(int, T_pvar_write, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf));
AMPI_DECL(int, T_pvar_reset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle));
AMPI_DECL(int, T_pvar_readreset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf));
AMPI_DECL(int, T_category_get_num, (int *num_cat));
AMPI_DECL(int, T_category_get_info, (int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                                     int *num_cvars, int *num_pvars, int *num_categories));
AMPI_DECL(int, T_category_get_index, (const char *name, int *cat_index));
AMPI_DECL(int, T_category_get_cvars, (int cat_index, int len, int indices[]));
AMPI_DECL(int, T_category_get_pvars, (int cat_index, int len, int indices[]));
AMPI_DECL(int, T_category_get_categories, (int cat_index, int len, int indices[]));
AMPI_DECL(int, T_category_changed, (int *stamp));

/* ---- process creation and management ---- */
AMPI_DECL(int, Comm_get_parent, (MPI_Comm *parent));
AMPI_DECL(int, Comm_spawn, (const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                            MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]));
AMPI_DECL(int, Comm_spawn_multiple, (int count, char *array_of_commands[], char **array_of_argv[],
                                     const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
                                     MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]));
AMPI_DECL(int, Open_port, (MPI_Info info, char *port_name));
AMPI_DECL(int, Close_port, (const char *port_name));
AMPI_DECL(int, Comm_accept, (const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                             MPI_Comm *newcomm));
AMPI_DECL(int, Comm_connect, (const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                              MPI_Comm *newcomm));
AMPI_DECL(int, Comm_disconnect, (MPI_Comm *comm));
AMPI_DECL(int, Comm_join, (int fd, MPI_Comm *intercomm));
AMPI_DECL(int, Publish_name, (const char *service_name, MPI_Info info, const char *port_name));
AMPI_DECL(int, Unpublish_name, (const char *service_name, MPI_Info info, const char *port_name));
AMPI_DECL(int, Lookup_name, (const char *service_name, MPI_Info info, char *port_name));

/* ---- MPI-IO ---- */
AMPI_DECL(int, File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh));
AMPI_DECL(int, File_close, (MPI_File *fh));
AMPI_DECL(int, File_delete, (const char *filename, MPI_Info info));
AMPI_DECL(int, File_set_size, (MPI_File fh, MPI_Offset size));
AMPI_DECL(int, File_preallocate, (MPI_File fh, MPI_Offset size));
AMPI_DECL(int, File_get_size, (MPI_File fh, MPI_Offset *size));
AMPI_DECL(int, File_get_group, (MPI_File fh, MPI_Group *group));
AMPI_DECL(int, File_get_amode, (MPI_File fh, int *amode));
AMPI_DECL(int, File_set_info, (MPI_File fh, MPI_Info info));
AMPI_DECL(int, File_get_info, (MPI_File fh, MPI_Info *info_used));
AMPI_DECL(int, File_set_view, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                               const char *datarep, MPI_Info info));
AMPI_DECL(int, File_get_view, (MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                               char *datarep));
AMPI_DECL(int, File_read_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                              MPI_Status *status));
AMPI_DECL(int, File_read_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                                  MPI_Status *status));
AMPI_DECL(int, File_write_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                               MPI_Datatype datatype, MPI_Status *status));
AMPI_DECL(int, File_write_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                   MPI_Datatype datatype, MPI_Status *status));
AMPI_DECL(int, File_iread_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                               MPI_Request *request));
AMPI_DECL(int, File_iwrite_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                MPI_Datatype datatype, MPI_Request *request));
AMPI_DECL(int, File_iread_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                                   MPI_Request *request));
AMPI_DECL(int, File_iwrite_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                    MPI_Datatype datatype, MPI_Request *request));
AMPI_DECL(int, File_read, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status));
AMPI_DECL(int, File_read_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status));
AMPI_DECL(int, File_write, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                            MPI_Status *status));
AMPI_DECL(int, File_write_all, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                                MPI_Status *status));
AMPI_DECL(int, File_iread, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request));
AMPI_DECL(int, File_iwrite, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                             MPI_Request *request));
AMPI_DECL(int, File_iread_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                                MPI_Request *request));
AMPI_DECL(int, File_iwrite_all, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                                 MPI_Request *request));
AMPI_DECL(int, File_seek, (MPI_File fh, MPI_Offset offset, int whence));
AMPI_DECL(int, File_get_position, (MPI_File fh, MPI_Offset *offset));
AMPI_DECL(int, File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset *disp));
AMPI_DECL(int, File_read_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                                  MPI_Status *status));
AMPI_DECL(int, File_write_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                                   MPI_Status *status));
AMPI_DECL(int, File_iread_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                                   MPI_Request *request));
AMPI_DECL(int, File_iwrite_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                                    MPI_Request *request));
AMPI_DECL(int, File_read_ordered, (MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                                   MPI_Status *status));
AMPI_DECL(int, File_write_ordered, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                                    MPI_Status *status));
AMPI_DECL(int, File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence));
AMPI_DECL(int, File_get_position_shared, (MPI_File fh, MPI_Offset *offset));
AMPI_DECL(int, File_read_at_all_begin, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                                        MPI_Datatype datatype));
AMPI_DECL(int, File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status));
AMPI_DECL(int, File_write_at_all_begin, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                         MPI_Datatype datatype));
AMPI_DECL(int, File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status));
AMPI_DECL(int, File_read_all_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype));
AMPI_DECL(int, File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status));
AMPI_DECL(int, File_write_all_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype));
AMPI_DECL(int, File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status));
AMPI_DECL(int, File_read_ordered_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype));
AMPI_DECL(int, File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status));
AMPI_DECL(int, File_write_ordered_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype));
AMPI_DECL(int, File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status));
AMPI_DECL(int, File_get_type_extent, (MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent));
AMPI_DECL(int, Register_datarep, (const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                                  MPI_Datarep_conversion_function *write_conversion_fn,
                                  MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state));
AMPI_DECL(int, File_set_atomicity, (MPI_File fh, int flag));
AMPI_DECL(int, File_get_atomicity, (MPI_File fh, int *flag));
AMPI_DECL(int, File_sync, (MPI_File fh));

/* ---- MPI 4.0 functions the library has (MPI_VERSION stays 3: README says
 * what of MPI 4.0 is there) ---- */
typedef struct AMPI_Session_s *MPI_Session;
#define MPI_SESSION_NULL ((MPI_Session)0)
#define MPI_MAX_PSET_NAME_LEN 256
#define MPI_MAX_STRINGTAG_LEN 256
typedef void MPI_Session_errhandler_function(MPI_Session *session, int *errcode, ...);
AMPI_DECL(int, Session_create_errhandler, (MPI_Session_errhandler_function *session_errhandler_fn,
                                           MPI_Errhandler *errhandler));
AMPI_DECL(int, Session_set_errhandler, (MPI_Session session, MPI_Errhandler errhandler));
AMPI_DECL(int, Session_get_errhandler, (MPI_Session session, MPI_Errhandler *errhandler));
AMPI_DECL(int, Session_call_errhandler, (MPI_Session session, int errorcode));
AMPI_DECL(int, Info_create_env, (int argc, char *argv[], MPI_Info *info));
AMPI_DECL(int, Session_init, (MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session));
AMPI_DECL(int, Session_finalize, (MPI_Session *session));

/* ---- MPI 4.1 buffered-send buffers: per communicator and session, flush ---- */
#define MPI_BUFFER_AUTOMATIC ((void *)-2)
AMPI_DECL(int, Buffer_flush, (void));
AMPI_DECL(int, Buffer_iflush, (MPI_Request *request));
AMPI_DECL(int, Comm_attach_buffer, (MPI_Comm comm, void *buffer, int size));
AMPI_DECL(int, Comm_detach_buffer, (MPI_Comm comm, void *buffer_addr, int *size));
AMPI_DECL(int, Comm_flush_buffer, (MPI_Comm comm));
AMPI_DECL(int, Comm_iflush_buffer, (MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Session_attach_buffer, (MPI_Session session, void *buffer, int size));
AMPI_DECL(int, Session_detach_buffer, (MPI_Session session, void *buffer_addr, int *size));
AMPI_DECL(int, Session_flush_buffer, (MPI_Session session));
AMPI_DECL(int, Session_iflush_buffer, (MPI_Session session, MPI_Request *request));
AMPI_DECL(int, Buffer_attach_c, (void *buffer, MPI_Count size));
AMPI_DECL(int, Buffer_detach_c, (void *buffer_addr, MPI_Count *size));
AMPI_DECL(int, Comm_attach_buffer_c, (MPI_Comm comm, void *buffer, MPI_Count size));
AMPI_DECL(int, Comm_detach_buffer_c, (MPI_Comm comm, void *buffer_addr, MPI_Count *size));
AMPI_DECL(int, Session_attach_buffer_c, (MPI_Session session, void *buffer, MPI_Count size));
AMPI_DECL(int, Session_detach_buffer_c, (MPI_Session session, void *buffer_addr, MPI_Count *size));
AMPI_DECL(int, Session_get_num_psets, (MPI_Session session, MPI_Info info, int *npset_names));
AMPI_DECL(int, Session_get_nth_pset, (MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name));
AMPI_DECL(int, Session_get_info, (MPI_Session session, MPI_Info *info_used));
AMPI_DECL(int, Session_get_pset_info, (MPI_Session session, const char *pset_name, MPI_Info *info));
AMPI_DECL(int, Group_from_session_pset, (MPI_Session session, const char *pset_name, MPI_Group *newgroup));
AMPI_DECL(int, Comm_create_from_group, (MPI_Group group, const char *stringtag, MPI_Info info,
                                        MPI_Errhandler errhandler, MPI_Comm *newcomm));
AMPI_DECL(int, Comm_idup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request));
AMPI_DECL(int, Info_get_string, (MPI_Info info, const char *key, int *buflen, char *value, int *flag));
AMPI_DECL(int, Isendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                           MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Isendrecv_replace, (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                                   int recvtag, MPI_Comm comm, MPI_Request *request));
/* persistent collectives */
AMPI_DECL(int, Barrier_init, (MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Bcast_init, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
           MPI_Request *request));
AMPI_DECL(int, Reduce_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           int root, MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Allreduce_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Gather_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Gatherv_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
           MPI_Request *request));
AMPI_DECL(int, Scatter_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Scatterv_init, (const void *sendbuf, const int sendcounts[], const int displs[],
           MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
           MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Allgather_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Allgatherv_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
           MPI_Request *request));
AMPI_DECL(int, Alltoall_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Alltoallv_init, (const void *sendbuf, const int sendcounts[], const int sdispls[],
           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Alltoallw_init, (const void *sendbuf, const int sendcounts[], const int sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
           const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Reduce_scatter_init, (const void *sendbuf, void *recvbuf, const int recvcounts[],
           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Reduce_scatter_block_init, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
           MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Scan_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Exscan_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Neighbor_allgather_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Neighbor_allgatherv_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
           MPI_Request *request));
AMPI_DECL(int, Neighbor_alltoall_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Neighbor_alltoallv_init, (const void *sendbuf, const int sendcounts[], const int sdispls[],
           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm, MPI_Info info, MPI_Request *request));
AMPI_DECL(int, Neighbor_alltoallw_init, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
           const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request));

#undef AMPI_DECL

#ifdef __cplusplus
}
#endif

#endif /* AMPI_MPI_MORE_H */
