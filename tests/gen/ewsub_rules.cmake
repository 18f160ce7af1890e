# Runs verisub-gen on data/gen/elementwise.cfg into OUT and checks that rules of the ewsub
# operator were generated and proved from its axioms: an operator added in one registration goes
# through enumeration, fingerprints, Z3 and pruning end to end.
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${GEN} --config ${SRC}/data/gen/elementwise.cfg --out ${OUT}/elementwise.pb --quiet
                WORKING_DIRECTORY ${SRC} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "verisub-gen failed (${rc})")
endif()
file(READ ${OUT}/elementwise.txt text)
foreach(rule ${EXPECTED})
  string(FIND "${text}" "${rule}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected proved rule not in ${OUT}/elementwise.txt: ${rule}")
  endif()
endforeach()
message(STATUS "ewsub rules generated and proved")
