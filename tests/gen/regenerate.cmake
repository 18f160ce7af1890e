# Runs verisub-gen on data/gen/${NAME}.cfg (default taso) into OUT and compares with data/rules/.
# THREADS, when set, overrides the config's thread count: the committed files were written at the
# config's, so regenerating them at another count checks that the output does not depend on it.
if(NOT NAME)
  set(NAME taso)
endif()
set(thread_flags)
if(THREADS)
  set(thread_flags --threads ${THREADS})
endif()
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${GEN} --config ${SRC}/data/gen/${NAME}.cfg --out ${OUT}/${NAME}.pb --unproved ${OUT}/${NAME}.unproved.txt --quiet ${thread_flags}
                WORKING_DIRECTORY ${SRC} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "verisub-gen failed (${rc})")
endif()
foreach(f ${NAME}.pb ${NAME}.txt ${NAME}.unproved.txt)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/${f} ${SRC}/data/rules/${f}
                  RESULT_VARIABLE diff)
  if(NOT diff EQUAL 0)
    message(FATAL_ERROR "regenerated ${f} differs from data/rules/${f}: the shipped database is stale "
                        "(regenerate with: verisub-gen --config data/gen/${NAME}.cfg --out data/rules/${NAME}.pb --unproved data/rules/${NAME}.unproved.txt)")
  endif()
endforeach()
message(STATUS "data/rules/${NAME}.pb, ${NAME}.txt and ${NAME}.unproved.txt regenerate byte for byte")
