from trainerctl.entry import main

main()
