# Runs verisub-gen on data/gen/taso.cfg into OUT and compares with data/rules/.
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${GEN} --config ${SRC}/data/gen/taso.cfg --out ${OUT}/taso.pb --unproved ${OUT}/taso.unproved.txt --quiet
                WORKING_DIRECTORY ${SRC} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "verisub-gen failed (${rc})")
endif()
foreach(f taso.pb taso.txt taso.unproved.txt)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/${f} ${SRC}/data/rules/${f}
                  RESULT_VARIABLE diff)
  if(NOT diff EQUAL 0)
    message(FATAL_ERROR "regenerated ${f} differs from data/rules/${f}: the shipped database is stale "
                        "(regenerate with: verisub-gen --config data/gen/taso.cfg --out data/rules/taso.pb --unproved data/rules/taso.unproved.txt)")
  endif()
endforeach()
message(STATUS "data/rules/taso.pb, taso.txt and taso.unproved.txt regenerate byte for byte")
