"""The workflow run end to end: every stage, from the robot's description to the report, in one
call on a digital twin (``demo``: the Panda, ``dynid demo``). It composes the stages' public
functions and adds none; the library never imports from here."""
