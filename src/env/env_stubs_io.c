/* MPI-IO (MPI 3.1 chapter 13): not supported yet.  Every function is
 * defined so that codes which reference MPI-IO link; each returns
 * MPI_ERR_UNSUPPORTED_OPERATION without ending the job, because the default
 * error handler of files is MPI_ERRORS_RETURN (docs/unsupported.md). */
#include "env/env_unsupported.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

ENV_STUB_FILE(File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh))
ENV_STUB_FILE(File_close, (MPI_File *fh))
ENV_STUB_FILE(File_delete, (const char *filename, MPI_Info info))
ENV_STUB_FILE(File_set_size, (MPI_File fh, MPI_Offset size))
ENV_STUB_FILE(File_preallocate, (MPI_File fh, MPI_Offset size))
ENV_STUB_FILE(File_get_size, (MPI_File fh, MPI_Offset *size))
ENV_STUB_FILE(File_get_group, (MPI_File fh, MPI_Group *group))
ENV_STUB_FILE(File_get_amode, (MPI_File fh, int *amode))
ENV_STUB_FILE(File_set_info, (MPI_File fh, MPI_Info info))
ENV_STUB_FILE(File_get_info, (MPI_File fh, MPI_Info *info_used))
ENV_STUB_FILE(File_set_view, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
               const char *datarep, MPI_Info info))
ENV_STUB_FILE(File_get_view, (MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
               char *datarep))
ENV_STUB_FILE(File_read_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
               MPI_Status *status))
ENV_STUB_FILE(File_read_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
               MPI_Status *status))
ENV_STUB_FILE(File_write_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
               MPI_Status *status))
ENV_STUB_FILE(File_write_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
               MPI_Status *status))
ENV_STUB_FILE(File_iread_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
               MPI_Request *request))
ENV_STUB_FILE(File_iwrite_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
               MPI_Request *request))
ENV_STUB_FILE(File_iread_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
               MPI_Request *request))
ENV_STUB_FILE(File_iwrite_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
               MPI_Request *request))
ENV_STUB_FILE(File_read, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
ENV_STUB_FILE(File_read_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
ENV_STUB_FILE(File_write, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
ENV_STUB_FILE(File_write_all, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
ENV_STUB_FILE(File_iread, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
ENV_STUB_FILE(File_iwrite, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
ENV_STUB_FILE(File_iread_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
ENV_STUB_FILE(File_iwrite_all, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
ENV_STUB_FILE(File_seek, (MPI_File fh, MPI_Offset offset, int whence))
ENV_STUB_FILE(File_get_position, (MPI_File fh, MPI_Offset *offset))
ENV_STUB_FILE(File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset *disp))
ENV_STUB_FILE(File_read_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
ENV_STUB_FILE(File_write_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
ENV_STUB_FILE(File_iread_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
ENV_STUB_FILE(File_iwrite_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
               MPI_Request *request))
ENV_STUB_FILE(File_read_ordered, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
ENV_STUB_FILE(File_write_ordered, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
               MPI_Status *status))
ENV_STUB_FILE(File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence))
ENV_STUB_FILE(File_get_position_shared, (MPI_File fh, MPI_Offset *offset))
ENV_STUB_FILE(File_read_at_all_begin, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype))
ENV_STUB_FILE(File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status))
ENV_STUB_FILE(File_write_at_all_begin, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
               MPI_Datatype datatype))
ENV_STUB_FILE(File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
ENV_STUB_FILE(File_read_all_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype))
ENV_STUB_FILE(File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status))
ENV_STUB_FILE(File_write_all_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype))
ENV_STUB_FILE(File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
ENV_STUB_FILE(File_read_ordered_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype))
ENV_STUB_FILE(File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status))
ENV_STUB_FILE(File_write_ordered_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype))
ENV_STUB_FILE(File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status))
ENV_STUB_FILE(File_get_type_extent, (MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent))
ENV_STUB_FILE(Register_datarep, (const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
               MPI_Datarep_conversion_function *write_conversion_fn,
               MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state))
ENV_STUB_FILE(File_set_atomicity, (MPI_File fh, int flag))
ENV_STUB_FILE(File_get_atomicity, (MPI_File fh, int *flag))
ENV_STUB_FILE(File_sync, (MPI_File fh))
